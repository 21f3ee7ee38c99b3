package probe

import (
	"github.com/geluproject/gelu/ops/activation"
	"github.com/geluproject/gelu/ops/analysis"
	"github.com/geluproject/gelu/train/report"
)

// NormalDerivs tabulates E[f'(X)], E[f'(X)²] and Var[f'(X)] for
// X ~ N(0, 1) of every activation (analysis.ProfileOf, by quadrature):
// one row per activation, each value ± its error. It records the values
// under prefix+Key()+".E_d1", ".E_d1sq" and ".Var_d1", and returns the
// profiles and, per activation, the integrand of E[f'(X)²],
// f'(x)²·φ(x), sampled at 801 points on [−4, 4].
func NormalDerivs(r *report.Report, prefix string, acts []activation.Activation) ([]analysis.Profile, report.TableData, []report.Series, error) {
	t := report.TableData{Header: []string{"activation", "E[f'(X)]", "E[f'(X)²]", "Var[f'(X)]"}}
	var profiles []analysis.Profile
	var series []report.Series
	for _, a := range acts {
		p, err := analysis.ProfileOf(a)
		if err != nil {
			return nil, report.TableData{}, nil, err
		}
		d := p.Deriv
		r.SetAll(prefix+a.Key()+".", map[string]float64{"E_d1": d.Mean.Value, "E_d1sq": d.MeanSq.Value, "Var_d1": d.Var.Value})
		t.Rows = append(t.Rows, []any{a.Title(), report.FormatPM(d.Mean.Value, d.Mean.Err), report.FormatPM(d.MeanSq.Value, d.MeanSq.Err), report.FormatPM(d.Var.Value, d.Var.Err)})
		profiles = append(profiles, p)
		series = append(series, report.FuncSeries(a.Title(), func(x float64) float64 { return a.Deriv(x) * a.Deriv(x) * activation.NormalPDF(x) }, -4, 4, 800))
	}
	return profiles, t, series, nil
}
