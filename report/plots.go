package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is a qualitative palette of 12 colours that stay apart on screen
// (after ColorBrewer's Paired and Set1); glyph shapes cycle past it.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 128, 255}, {128, 64, 0, 255},
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}

func colorOf(i int) color.RGBA { return palette[i%len(palette)] }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

func save(p *plot.Plot, dir, name string, w, h vg.Length) error {
	if err := p.Save(w, h, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("report: %s: %w", name, err)
	}
	return nil
}

// lambdaPlot draws validation error against λ, one line per model. λ is
// placed by grid index (the grid holds 0, which a log axis cannot show)
// and labelled with its value.
func lambdaPlot(dir, name string, fits []FitPoint) error {
	var lambdas []float64
	for _, f := range fits {
		lambdas = append(lambdas, f.Lambda)
	}
	slices.Sort(lambdas)
	lambdas = slices.Compact(lambdas)
	p := newPlot("Validation error against λ", "λ", "validation error")
	var ticks []plot.Tick
	for i, l := range lambdas {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprintf("%g", l)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(lambdas))-0.3+0.8 // room on the right for the legend
	p.Legend.Top = true
	for mi, m := range modelsOf(fits) {
		var xys plotter.XYs
		var chosen plotter.XYs
		for _, f := range fits {
			if f.Model != m || math.IsNaN(f.ValidError) {
				continue
			}
			pt := plotter.XY{X: float64(slices.Index(lambdas, f.Lambda)), Y: f.ValidError}
			xys = append(xys, pt)
			if f.Selected {
				chosen = append(chosen, pt)
			}
		}
		if len(xys) == 0 {
			continue
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmpF(a.X, b.X) })
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
		l.Color, s.Color, s.Shape = colorOf(mi), colorOf(mi), shapes[mi%len(shapes)]
		l.Width = vg.Points(1.5)
		p.Add(l, s)
		p.Legend.Add(m, l, s)
		if len(chosen) > 0 {
			c, err := plotter.NewScatter(chosen)
			if err != nil {
				return err
			}
			c.Color, c.Shape, c.Radius = colorOf(mi), draw.RingGlyph{}, vg.Points(7)
			p.Add(c)
		}
	}
	return save(p, dir, name, 6*vg.Inch, 3.6*vg.Inch)
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func modelsOf(fits []FitPoint) []string {
	var out []string
	for _, f := range fits {
		if !slices.Contains(out, f.Model) {
			out = append(out, f.Model)
		}
	}
	return out
}

// tracePlot draws one model's training curves: the objective (value) or
// the validation error against iteration, one line per λ.
func tracePlot(dir, name, model string, trace []TracePoint, validation bool) error {
	p, err := traceFigure(model, trace, validation)
	if err != nil {
		return fmt.Errorf("report: %s: %w", name, err)
	}
	return save(p, dir, name, 4.8*vg.Inch, 3.2*vg.Inch)
}

// legendRoom is the share of a plot's x range added on the right for its
// legend, so that no line or point runs under it.
const legendRoom = 0.4

func traceFigure(model string, trace []TracePoint, validation bool) (*plot.Plot, error) {
	title, ylab := model+": training objective", "objective (mean log-likelihood − λ‖Θ‖²)"
	if validation {
		title, ylab = model+": validation error", "validation error"
	}
	p := newPlot(title, "iteration", ylab)
	p.Legend.Top = validation
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	lo, hi := math.Inf(1), math.Inf(-1)
	var lambdas []float64
	for _, t := range trace {
		if t.Model == model && !slices.Contains(lambdas, t.Lambda) {
			lambdas = append(lambdas, t.Lambda)
		}
	}
	drawn := 0
	for li, l := range lambdas {
		var xys plotter.XYs
		for _, t := range trace {
			v := t.Objective
			if validation {
				v = t.ValidError
			}
			if t.Model == model && t.Lambda == l && !math.IsNaN(v) && !math.IsInf(v, 0) {
				xys = append(xys, plotter.XY{X: float64(t.Iteration), Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, s.Color, s.Radius = colorOf(li), colorOf(li), vg.Points(1.5)
		p.Add(line, s)
		p.Legend.Add(fmt.Sprintf("λ=%g", l), line)
		for _, xy := range xys {
			lo, hi = min(lo, xy.X), max(hi, xy.X)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, errNothing
	}
	// The legend sits in a strip right of the last iteration.
	p.X.Min, p.X.Max = lo, hi+legendRoom*max(hi-lo, 1)
	return p, nil
}

// errNothing means a plot would be empty; its section is left out.
var errNothing = fmt.Errorf("report: nothing to draw")

// mapPlot draws a t-SNE map coloured (and shaped) by subcategory.
func mapPlot(dir, name, title string, y []float64, sub []int, subNames []string) error {
	p := newPlot(title, "", "")
	p.HideAxes()
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	present := map[int]int{}
	for _, s := range sub {
		present[s]++
	}
	var order []int
	for s := range present {
		order = append(order, s)
	}
	slices.Sort(order)
	// Room on the right for the legend, so it covers no point.
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range sub {
		lo, hi = min(lo, y[2*i]), max(hi, y[2*i])
	}
	p.X.Min, p.X.Max = lo, hi+0.4*(hi-lo)
	for _, s := range order {
		var xys plotter.XYs
		for i, si := range sub {
			if si == s {
				xys = append(xys, plotter.XY{X: y[2*i], Y: y[2*i+1]})
			}
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
		sc.Color, sc.Shape, sc.Radius = colorOf(s), shapes[(s/len(palette))%len(shapes)], vg.Points(2.2)
		p.Add(sc)
		if len(order) <= 24 {
			p.Legend.Add(subNames[s], sc)
		}
	}
	return save(p, dir, name, 5.5*vg.Inch, 5*vg.Inch)
}

// gatePlot draws the mean gate weight P(k|x) of each space, stacked, per
// subcategory.
func gatePlot(dir, name string, g *Gate) error {
	p, err := gateFigure(g)
	if err != nil {
		return fmt.Errorf("report: %s: %w", name, err)
	}
	return save(p, dir, name, vg.Length(max(5, 0.45*float64(len(g.Subcats)+2)))*vg.Inch, 4*vg.Inch)
}

func gateFigure(g *Gate) (*plot.Plot, error) {
	p := newPlot("Monomer's gate: mean P(k|x) by subcategory", "", "mean P(k|x)")
	w := vg.Points(max(6, min(24, 400/float64(max(1, len(g.Subcats)+2)))))
	var below *plotter.BarChart
	for k := range g.Spaces {
		vals := make(plotter.Values, len(g.Subcats))
		for s := range g.Subcats {
			vals[s] = g.Mean[s][k]
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.Color = colorOf(k)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(fmt.Sprintf("space %d", k+1), b)
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	// A probability: the axis stops at 1, and the legend stands in two
	// empty slots right of the last stack rather than above the stacks.
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"},
		{Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}})
	names := make([]string, len(g.Subcats))
	for i, s := range g.Subcats {
		names[i] = fmt.Sprintf("%s (%d)", s, g.Items[i])
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(g.Subcats))+1.5
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	return p, nil
}
