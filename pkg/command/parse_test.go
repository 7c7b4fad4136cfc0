package command

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Command
		ok   bool
	}{
		{"/redfix retry", Command{Verb: Retry}, true},
		{"/redfix explain\r\n", Command{Verb: Explain}, true},
		{"  /redfix close", Command{Verb: Close}, true},
		{"/redfix revert", Command{Verb: Revert}, true},
		{"/redfix  revise also handle the negative case", Command{Verb: Revise, What: "also handle the negative case"}, true},
		{"/redfix revise\nkeep the old name\r\nand add a test", Command{Verb: Revise, What: "keep the old name\nand add a test"}, true},
		{"/redfix\trevise\tuse a constant", Command{Verb: Revise, What: "use a constant"}, true},
		{"/redfix revise", Command{}, false},        // what to change is missing
		{"/redfix revise   \n  ", Command{}, false}, // so is it here
		{"/redfix close please", Command{}, false},  // no words after the others
		{"/redfix Retry", Command{}, false},         // verbs are lower case
		{"/redfix merge", Command{}, false},         // not a command
		{"/redfix", Command{}, false},
		{"/redfixretry", Command{}, false},
		{"thanks! /redfix retry", Command{}, false}, // the first line must start with it
		{"LGTM\n/redfix retry", Command{}, false},   // the first line only
		{"> /redfix close", Command{}, false},       // a quote of someone's command
		{"`/redfix close`", Command{}, false},
		{"", Command{}, false},
	} {
		got, ok := Parse(tc.body)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
