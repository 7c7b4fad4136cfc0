// Package faults holds redfix's fault tests: real servers (a redis-server
// the test starts and stops on a port of its own, an embedded NATS
// JetStream restarted on the same store directory) and real bot and
// worker processes killed with SIGKILL, to show that no report is lost and
// no failure group stays stuck. It has no code of its own.
package faults
