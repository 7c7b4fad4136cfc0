// Package throughput holds the ingest-and-triage throughput benchmark:
// reports parsed, fingerprinted, deduplicated through the store and queued
// on JetStream, several at once, with the latency of each report.
package throughput
