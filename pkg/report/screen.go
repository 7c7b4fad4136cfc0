package report

import "bytes"

// Screen is what an ingest API needs to know of a report before it stores
// it: its format, and that Parse would not refuse it. A report in a
// registered format that can screen (Screener) is not parsed: the format
// refuses exactly what Parse refuses, with the same reasons, at a fraction
// of the cost; parsed is false and res holds only the format. JUnit XML,
// and a format that cannot screen, have no cheaper check than their
// parse: the report is parsed, and res is Parse's result (parsed true).
func Screen(data []byte) (res Result, parsed bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '<' {
		if f, ok := sniff(trimmed).(Screener); ok {
			if err := f.Screen(trimmed); err != nil {
				return Result{}, false, err
			}
			return Result{Format: sniff(trimmed).Name()}, false, nil
		}
	}
	res, err = Parse(data)
	return res, err == nil, err
}
