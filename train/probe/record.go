package probe

import (
	"errors"

	"github.com/geluproject/gelu/train/report"
)

// Record sets what s measured as summary values of r, the kind of
// measurement first and who (an activation and a phase, say) second:
//
//	momentum.<who>.<buffer>.<value>   every buffer's Comparison.Values (buffer: Comparison.Name)
//	grad.<who>.<tensor>.var           Σ_j Var(g_j) per parameter tensor and over all ("all")
//	grad.<who>.<tensor>.mean_sq       Σ_j mean(g_j)², likewise
//	net.<who>.E_d1, net.<who>.E_d1sq  the network's mean f'(z) and f'(z)² (UnitMean, UnitMeanSq)
func (s Summary) Record(r *report.Report, who string) error {
	var errs []error
	for _, c := range s.Buffers {
		errs = append(errs, r.SetAll("momentum."+who+"."+c.Name()+".", c.Values()))
	}
	for i, t := range s.Grad {
		errs = append(errs, r.SetAll("grad."+who+"."+s.GradName(i)+".", map[string]float64{"var": t.Var, "mean_sq": t.MeanSq}))
	}
	errs = append(errs, r.SetAll("net."+who+".", map[string]float64{"E_d1": s.UnitMean, "E_d1sq": s.UnitMeanSq}))
	return errors.Join(errs...)
}
