package activation

// ReLU: f(x) = max(0, x).
//
//	f'(x)  = 1 for x > 0, else 0 (PyTorch's convention at 0)
//	f''(x) = 0
//
// NaN propagates through f, f' and f''.

func reluF(x float64) float64 {
	if x > 0 || x != x {
		return x
	}
	return 0
}

func reluD1(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 0:
		return 1
	}
	return 0
}

func reluD2(x float64) float64 {
	if x != x {
		return x
	}
	return 0
}

// ReLU is max(0, x).
var ReLU = of(&reluRow)

var reluRow = row{
	name:        "relu",
	title:       fixedTitle("ReLU"),
	ref:         noParam(reluF, reluD1, reluD2),
	breakpoints: []float64{0},
	loop32:      reluChunk[float32],
	loop64:      reluChunk[float64],
}
