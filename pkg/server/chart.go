package server

import (
	"fmt"
	"html"
	"html/template"
	"strings"
)

// rateChart draws periods as an inline SVG: the pull requests published as
// grey bars (scaled to the busiest period), the publish rate as a green
// line and the land rate as a blue one (0-100%). A period with nothing to
// divide by leaves a gap in its line. Every text in it is escaped.
func rateChart(name string, periods []Period, width, height int) template.HTML {
	const padL, padR, padT, padB = 36, 8, 8, 22
	plotW, plotH := float64(width-padL-padR), float64(height-padT-padB)
	n := len(periods)
	if n == 0 {
		return ""
	}
	step := plotW / float64(n)
	x := func(i int) float64 { return float64(padL) + step*(float64(i)+0.5) }
	y := func(r float64) float64 { return float64(padT) + plotH*(1-r) }
	var maxPub int64
	for _, p := range periods {
		maxPub = max(maxPub, p.Published)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		html.EscapeString(name), width, height, width, height, html.EscapeString("publish and land rate, "+name))
	for _, g := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="10" text-anchor="end" fill="#666">%.0f%%</text>`,
			padL, width-padR, y(g), y(g), padL-4, y(g)+3, 100*g)
	}
	for i, p := range periods {
		if maxPub > 0 && p.Published > 0 {
			h := plotH * float64(p.Published) / float64(maxPub)
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#e3e3e3"><title>%s: %d published</title></rect>`,
				x(i)-step*0.35, float64(padT)+plotH-h, step*0.7, h, html.EscapeString(p.Start), p.Published)
		}
		if every := max(1, n/6); i%every == 0 || i == n-1 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#666">%s</text>`, x(i), height-6, html.EscapeString(shortDate(p.Start)))
		}
	}
	line := func(class, color string, rate func(Period) *float64) {
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline class="%s" points="%s" fill="none" stroke="%s" stroke-width="2"/>`, class, strings.Join(pts, " "), color)
			}
			pts = pts[:0]
		}
		for i, p := range periods {
			r := rate(p)
			if r == nil {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(*r)))
			fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s %.0f%%</title></circle>`,
				class, x(i), y(*r), color, html.EscapeString(p.Start), strings.ReplaceAll(class, "-", " "), 100**r)
		}
		flush()
	}
	line("publish-rate", "#1a7f37", func(p Period) *float64 { return p.PublishRate })
	line("land-rate", "#0b5cad", func(p Period) *float64 { return p.LandRate })
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built here from numbers and escaped text
}

// shortDate is "11-23" for "2026-11-23".
func shortDate(d string) string {
	if len(d) == len("2026-11-23") {
		return d[5:]
	}
	return d
}
