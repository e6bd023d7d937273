package main

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// plotSeries is one line of a panel: y at each x.
type plotSeries struct {
	name, color string
	xs, ys      []float64
	// dashed draws a reference line (a limit) rather than a measurement.
	dashed bool
}

// plotPanel is one chart of the plot, sharing the x axis with the others.
type plotPanel struct {
	title, unit string
	series      []plotSeries
}

// The plot's geometry, in SVG user units.
const (
	plotWidth, panelHeight       = 720.0, 260.0
	plotLeft, plotRight          = 70.0, 180.0 // margins; the legend sits right
	plotTop, plotBottom          = 30.0, 40.0
	plotInnerW                   = plotWidth - plotLeft - plotRight
	plotInnerH                   = panelHeight - plotTop - plotBottom
	plotYTicks                   = 4
	svgHeader                    = `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">` + "\n"
	plotXLabel                   = "jobs/s (log scale)"
	plotMarkerRadius             = 3.0
	plotBackground               = `<rect width="100%" height="100%" fill="white"/>` + "\n"
	plotGrid, plotAxis, plotText = "#ddd", "#333", "#222"
)

// scalePlot draws panels stacked, x on a log scale (the rates step up
// geometrically), each y from 0 to its largest value, so a knee shows as a
// line turning up. It is hand-written SVG: no dependency for a few lines.
func scalePlot(title string, panels []plotPanel) string {
	var b strings.Builder
	height := panelHeight*float64(len(panels)) + 20
	fmt.Fprintf(&b, svgHeader, plotWidth, height, plotWidth, height)
	b.WriteString(plotBackground)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" font-size="13" fill="%s">%s</text>`+"\n", plotLeft, plotText, html.EscapeString(title))
	for i, p := range panels {
		drawPanel(&b, p, 20+panelHeight*float64(i))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// xRange is the smallest and largest x of every series of every panel.
func xRange(p plotPanel) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range p.series {
		for _, x := range s.xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return lo, hi
}

// plotX maps x to the panel's horizontal position on a log scale.
func plotX(x, lo, hi float64) float64 {
	if hi <= lo || x <= 0 || lo <= 0 {
		return plotLeft + plotInnerW/2
	}
	return plotLeft + plotInnerW*(math.Log(x)-math.Log(lo))/(math.Log(hi)-math.Log(lo))
}

// plotY maps y to the vertical position of a panel whose top is at top.
func plotY(y, yMax, top float64) float64 {
	if yMax <= 0 {
		return top + plotTop + plotInnerH
	}
	return top + plotTop + plotInnerH*(1-y/yMax)
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten, so ticks are round.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func drawPanel(b *strings.Builder, p plotPanel, top float64) {
	lo, hi := xRange(p)
	yMax := 0.0
	for _, s := range p.series {
		for _, y := range s.ys {
			yMax = math.Max(yMax, y)
		}
	}
	yMax = niceMax(yMax)
	fmt.Fprintf(b, `<text x="%.0f" y="%.1f" fill="%s">%s (%s)</text>`+"\n", plotLeft, top+plotTop-8, plotText, html.EscapeString(p.title), html.EscapeString(p.unit))
	for i := 0; i <= plotYTicks; i++ {
		v := yMax * float64(i) / plotYTicks
		y := plotY(v, yMax, top)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", plotLeft, y, plotLeft+plotInnerW, y, plotGrid)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="%s">%g</text>`+"\n", plotLeft-6, y+4, plotText, v)
	}
	bottom := plotY(0, yMax, top)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", plotLeft, bottom, plotLeft+plotInnerW, bottom, plotAxis)
	if len(p.series) > 0 {
		for _, x := range p.series[0].xs {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%g</text>`+"\n", plotX(x, lo, hi), bottom+14, plotText, x)
		}
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s</text>`+"\n", plotLeft+plotInnerW/2, bottom+30, plotText, plotXLabel)
	for i, s := range p.series {
		var pts []string
		for j := range min(len(s.xs), len(s.ys)) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", plotX(s.xs[j], lo, hi), plotY(s.ys[j], yMax, top)))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`+"\n", s.color, dash, strings.Join(pts, " "), html.EscapeString(s.name))
		for _, pt := range pts {
			if s.dashed {
				break
			}
			x, y, _ := strings.Cut(pt, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%.0f" fill="%s"/>`+"\n", x, y, plotMarkerRadius, s.color)
		}
		ly := top + plotTop + 14*float64(i)
		lx := plotLeft + plotInnerW + 12
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", lx, ly-4, lx+16, ly-4, s.color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", lx+20, ly, plotText, html.EscapeString(s.name))
	}
}

// scalePanels are the scale run's plot: latency p99 and CPU against the rate.
func scalePanels(all []scaleRow, limit time.Duration) []plotPanel {
	var rows []scaleRow
	for _, r := range all {
		if r.measured() {
			rows = append(rows, r)
		}
	}
	var xs []float64
	col := func(f func(scaleRow) float64) []float64 {
		var out []float64
		for _, r := range rows {
			out = append(out, f(r))
		}
		return out
	}
	for _, r := range rows {
		xs = append(xs, r.rate)
	}
	return []plotPanel{
		{title: "p99 latency against the rate", unit: "s", series: []plotSeries{
			{"queued → started", "#d62728", xs, col(func(r scaleRow) float64 { return r.toStarted.P99.Seconds() }), false},
			{"queued → pod Running", "#1f77b4", xs, col(func(r scaleRow) float64 { return r.toRunning.P99.Seconds() }), false},
			{"webhook answer", "#2ca02c", xs, col(func(r scaleRow) float64 { return r.webhookP99.Seconds() }), false},
			{fmt.Sprintf("limit (%v)", limit), "#7f7f7f", xs, col(func(scaleRow) float64 { return limit.Seconds() }), true},
		}},
		{title: "CPU against the rate", unit: "cores", series: []plotSeries{
			{"machine (all)", "#7f7f7f", xs, col(func(r scaleRow) float64 { return r.host }), false},
			{"arcflow worker", "#d62728", xs, col(func(r scaleRow) float64 { return r.worker }), false},
			{"Temporal server", "#9467bd", xs, col(func(r scaleRow) float64 { return r.temporal + r.postgres }), false},
			{"kube-apiserver + etcd", "#1f77b4", xs, col(func(r scaleRow) float64 { return r.apiserver + r.etcd }), false},
			{"simulator", "#ff7f0e", xs, col(func(r scaleRow) float64 { return r.sim }), false},
			{"arcflow-webhook", "#2ca02c", xs, col(func(r scaleRow) float64 { return r.webhook }), false},
		}},
	}
}
