package experiment

import "testing"

func TestFlagsCheck(t *testing.T) {
	good := Flags{Seeds: 1, Workers: 1}
	for _, tc := range []struct {
		f     Flags
		which FlagSet
		want  string
	}{
		{good, SeedsFlag | SubsetFlag, ""},
		{Flags{Seeds: 0, Workers: 1}, SeedsFlag, "-seeds 0: want ≥ 1"},
		{Flags{Seeds: 0, Workers: 1}, SubsetFlag, ""}, // -seeds not defined: not checked
		{Flags{Seeds: 1, Workers: 0}, 0, "-workers 0: want ≥ 1"},
		{Flags{Seeds: 1, Workers: 1, TrainN: -1, TestN: -2}, SubsetFlag, "-train-n -1: want ≥ 0\n-test-n -2: want ≥ 0"},
		{Flags{Seeds: 1, Workers: 1, TrainN: -1}, SeedsFlag, ""},
	} {
		err := tc.f.Check(tc.which)
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("%+v.Check(%d) = %v, want %q", tc.f, tc.which, err, tc.want)
		}
	}
}
