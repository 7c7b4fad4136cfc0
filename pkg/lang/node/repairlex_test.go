package node

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// kinds is the tokens of line as "KIND:text".
func kinds(line string, toks []dialect.Tok) []string {
	var out []string
	for _, tk := range toks {
		out = append(out, tk.Tok.String()+":"+line[tk.Off:tk.End])
	}
	return out
}

func TestScanJS(t *testing.T) {
	cases := []struct {
		line string
		want string // the tokens, " "-joined
	}{
		{`if (a === b && c !== d) {`, "if:if (:( IDENT:a ==:=== IDENT:b &&:&& IDENT:c !=:!== IDENT:d ):) {:{"},
		{`const n = 1_000 + 0x1F - 1.5e3 + 10n;`, "const:const IDENT:n =:= INT:1_000 +:+ INT:0x1F -:- FLOAT:1.5e3 +:+ INT:10n ;:;"},
		{`x ??= y ?? z?.w`, "IDENT:x ...:??= IDENT:y ...:?? IDENT:z .:?. IDENT:w"},
		{`let v = a ? .5 : b?.5:c`, "var:let IDENT:v =:= IDENT:a ...:? FLOAT:.5 ::: IDENT:b ...:? FLOAT:.5 ::: IDENT:c"},
		{`const f = (x) => x >>> 2; // shift`, "const:const IDENT:f =:= (:( IDENT:x ):) ...:=> IDENT:x ...:>>> INT:2 ;:; COMMENT:// shift"},
		{"s = `a ${b < c ? `x${d}` : '}'} e` + 'it\\'s' + \"q\"", "IDENT:s =:= STRING:`a ${b < c ? `x${d}` : '}'} e` +:+ STRING:'it\\'s' +:+ STRING:\"q\""},
		{`return /a\/[/]b/gi.test(s) /* c */ / 2`, "return:return STRING:/a\\/[/]b/gi .:. IDENT:test (:( IDENT:s ):) COMMENT:/* c */ /:/ INT:2"},
		{`x = a / b / c`, "IDENT:x =:= IDENT:a /:/ IDENT:b /:/ IDENT:c"},
		{`const m: Map<string, Array<number>> = new Map<string, number[]>();`, "const:const IDENT:m ::: IDENT:Map ...:< IDENT:string ,:, IDENT:Array ...:< IDENT:number ...:>> =:= default:new IDENT:Map ...:< IDENT:string ,:, IDENT:number [:[ ]:] ...:> (:( ):) ;:;"},
		{`if (i<n && j>0) {`, "if:if (:( IDENT:i <:< IDENT:n &&:&& IDENT:j >:> INT:0 ):) {:{"},
		{`return this.#count!.value + $el._x1`, "return:return IDENT:this .:. IDENT:#count ...:! .:. IDENT:value +:+ IDENT:$el .:. IDENT:_x1"},
		{`i++; --j; k += 2`, "IDENT:i ++:++ ;:; --:-- IDENT:j ;:; IDENT:k +=:+= INT:2"},
		{`obj.default = x.delete`, "IDENT:obj .:. IDENT:default =:= IDENT:x .:. IDENT:delete"},
	}
	for _, tc := range cases {
		toks, ok := scanJS(tc.line)
		if !ok {
			t.Errorf("scanJS(%q) did not scan", tc.line)
			continue
		}
		if got := strings.Join(kinds(tc.line, toks), " "); got != tc.want {
			t.Errorf("scanJS(%q)\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
	for _, bad := range []string{
		"const s = `starts here",          // a template that goes on
		`x = 1 /* a comment that goes on`, // a block comment that goes on
		`return <div className="a">{x}</div>;`,
		`const v = <number>w;`,
		`s = 'unclosed`,
		`x = a \ b`,
	} {
		if toks, ok := scanJS(bad); ok {
			t.Errorf("scanJS(%q) scanned: %q", bad, kinds(bad, toks))
		}
	}
}
