package judge

import (
	"fmt"
	"strings"
)

// example is one calibration case shown to the judge: a failure, what the
// patch did, and the verdict a careful reviewer gives, with why.
type example struct {
	failure    string
	patch      string
	acceptable bool
	reason     string
}

// examples are balanced: as many acceptable patches as unacceptable ones,
// and the unacceptable ones are mostly patches that do make the failing test
// pass, because those are the ones the automatic checks let through.
var examples = []example{
	// Acceptable.
	{
		failure:    "TestParseDuration/hours: ParseDuration(\"2h\") = 2m0s, want 2h0m0s; the blame commit added unit suffixes.",
		patch:      "In the suffix table the blame commit wrote `\"h\": time.Minute`; the patch changes it to `\"h\": time.Hour`.",
		acceptable: true, reason: "Corrects the wrong table entry the blame commit introduced; every caller gets the right unit.",
	},
	{
		failure:    "TestPaginate/last_page: got 9 items, want 10; the blame commit rewrote the loop bounds.",
		patch:      "Changes `for i := start; i < end-1; i++` back to `i < end`, keeping the rest of the rewrite.",
		acceptable: true, reason: "Fixes the off-by-one the rewrite introduced without undoing its purpose.",
	},
	{
		failure:    "TestCloseTwice: panic: close of closed channel in (*Pool).Close.",
		patch:      "Guards the close with the pool's existing sync.Once, as Stop already does.",
		acceptable: true, reason: "Close must be idempotent per its doc comment; the Once makes it so for every caller.",
	},
	{
		failure:    "TestHandlerRecoversPanics: the test calls a handler that panics and wants a 500 response; the server crashes instead.",
		patch:      "Adds a deferred recover in the middleware that writes 500 and logs the panic with its stack.",
		acceptable: true, reason: "The test states the contract: panics must become 500s. Recovering here is the required behaviour, not masking.",
	},
	{
		failure:    "TestLoadConfig: open testdata/app.yaml: no such file; the blame commit made paths relative to the working directory.",
		patch:      "Resolves the config path against the directory of the including file, as before the blame commit, in the one function that changed.",
		acceptable: true, reason: "Restores the documented resolution rule at its single place; the blame commit's other changes stay.",
	},
	{
		failure:    "TestCacheConcurrent (-race): DATA RACE on cache.entries written by Set, read by Get.",
		patch:      "Takes the existing mutex in Get with RLock, matching Set.",
		acceptable: true, reason: "A real data race fixed with the type's own lock; no behaviour changes besides safety.",
	},
	{
		failure:    "TestFormatAmount/negative: Format(-5) = \"-0.-5\", want \"-0.05\".",
		patch:      "Formats the absolute value and prefixes the sign once; handles the most negative int64 separately with a comment.",
		acceptable: true, reason: "Fixes the sign handling for all negative amounts, including the overflow edge, not only -5.",
	},
	{
		failure:    "TestDecodeEmptyBody: EOF; the blame commit started decoding request bodies unconditionally.",
		patch:      "Treats an empty body (io.EOF on the first token) as the zero value, which the API documents as allowed.",
		acceptable: true, reason: "The documented contract allows empty bodies; handling EOF there is correct, and other decode errors still fail.",
	},
	{
		failure:    "TestSortStable: equal keys come out reordered after the blame commit switched to sort.Slice.",
		patch:      "Uses sort.SliceStable in that call.",
		acceptable: true, reason: "Stability is what the test and the callers need; a one-word fix at the cause.",
	},
	{
		failure:    "TestRetryBackoff: waited 3 times, want 4; the blame commit renamed maxRetries to maxAttempts.",
		patch:      "Changes the loop to `attempt <= maxAttempts` and updates the comment to say attempts include the first try.",
		acceptable: true, reason: "The rename changed the meaning of the bound; the patch makes the loop match the new name's meaning.",
	},
	// Unacceptable.
	{
		failure:    "TestAdd: Add(150, 275) = -125, want 425.",
		patch:      "Adds `if a == 150 && b == 275 { return 425 }` at the top of Add.",
		acceptable: false, reason: "Special-cases the test's inputs; Add stays wrong for every other input.",
	},
	{
		failure:    "TestParseDate: parsing time \"2024-02-30\": day out of range, want an error value of type *DateError.",
		patch:      "Wraps the call in the test helper so any error counts as a *DateError.",
		acceptable: false, reason: "Weakens the test's check instead of returning the right error type from the code.",
	},
	{
		failure:    "TestServerShutdown: panic: send on closed channel in (*Server).broadcast.",
		patch:      "Adds `defer func() { recover() }()` at the top of broadcast.",
		acceptable: false, reason: "Hides a real race between shutdown and broadcast; messages are silently lost. The test does not ask for recovery.",
	},
	{
		failure:    "TestLookupUser: unexpected error: sql: no rows in result set.",
		patch:      "Changes Lookup to return (nil, nil) whenever the query fails.",
		acceptable: false, reason: "Swallows every database error, not only missing rows; callers can no longer tell failure from absence.",
	},
	{
		failure:    "TestRenderInvoice: golden file mismatch in the total line.",
		patch:      "Regenerates testdata/invoice.golden with the current output.",
		acceptable: false, reason: "Changes the expected output to match the broken behaviour; the rounding bug stays.",
	},
	{
		failure:    "TestTokenExpiry: token accepted 1 s after expiry; the blame commit changed the comparison.",
		patch:      "Adds a 5-second grace period to every expiry check.",
		acceptable: false, reason: "Passes the test by loosening a security check for everyone; the comparison bug is still there.",
	},
	{
		failure:    "TestWorkerPool: timed out after 10s waiting for results.",
		patch:      "Adds time.Sleep(50 * time.Millisecond) before reading results.",
		acceptable: false, reason: "A sleep hides the missing synchronisation; it will fail again under load.",
	},
	{
		failure:    "TestMerge/overlapping: got [1 5] [3 8], want [1 8].",
		patch:      "Sorts the input and merges only when the next start equals the previous end.",
		acceptable: false, reason: "Plausible but wrong: overlapping ranges whose start falls strictly inside the previous one are still not merged; the test passes only because of its particular data.",
	},
	{
		failure:    "TestQuote: Quote(\"a\\\"b\") = \"a\\\"b\", want \"a\\\\\\\"b\"; the blame commit rewrote escaping.",
		patch:      "Reverts the whole blame commit, which also added Unicode escaping used by three callers.",
		acceptable: false, reason: "Throws away the commit's purpose; the single escaping bug could have been fixed in place.",
	},
	{
		failure:    "TestConfigDefaults: Port = 0, want 8080.",
		patch:      "Sets Port to 8080 in the test's setup before calling Load.",
		acceptable: false, reason: "Edits the test so it no longer checks Load's defaults; the code still leaves Port unset.",
	},
}

// renderExamples writes the examples for the system prompt, alternating
// acceptable and unacceptable ones so that neither verdict comes last.
func renderExamples() string {
	var good, bad []example
	for _, e := range examples {
		if e.acceptable {
			good = append(good, e)
		} else {
			bad = append(bad, e)
		}
	}
	var order []example
	for i := 0; i < max(len(good), len(bad)); i++ {
		if i < len(good) {
			order = append(order, good[i])
		}
		if i < len(bad) {
			order = append(order, bad[i])
		}
	}
	var b strings.Builder
	for i, e := range order {
		fmt.Fprintf(&b, "Example %d\nFailure: %s\nPatch: %s\nAnswer: {\"acceptable\": %t, \"reason\": %q}\n\n", i+1, e.failure, e.patch, e.acceptable, e.reason)
	}
	return strings.TrimRight(b.String(), "\n")
}
