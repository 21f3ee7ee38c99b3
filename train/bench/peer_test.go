package bench

import (
	"cmp"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakePeer is a peer in sh speaking the protocol, the stand-in for
// bench_torch.py: as installed (no thread option) it runs 1 intra-op
// thread and 2 BLAS threads; its info's cpu_capability shows the thread
// options and variables it was started with; it reports the --threads it
// was given unless lie is set; every workload takes 0.25 s (0.2 s as
// installed) but names starting "bad", an error.
func fakePeer(t *testing.T, lie string) string {
	script := `threads=1; blas=2; opts=""; seconds=0.2
while [ $# -gt 0 ]; do
	case "$1" in
	--threads) threads=$2; opts="$opts threads=$2"; seconds=0.25; shift ;;
	--blas-threads) blas=$2; opts="$opts blas=$2"; seconds=0.25; shift ;;
	esac
	shift
done
env=$(env | grep -E '^(GOMAXPROCS|OMP_NUM_THREADS|OPENBLAS_NUM_THREADS|GOTO_NUM_THREADS|MKL_NUM_THREADS)=' | sort | tr '\n' ' ')
echo "{\"torch\": \"fake\", \"blas\": \"none\", \"cpu_capability\": \"options:$opts; env: $env\", \"threads\": ` + cmp.Or(lie, "$threads") + `, \"interop_threads\": 1, \"blas_threads\": $blas}"
while read name; do
	case "$name" in
	bad*) echo "{\"name\": \"$name\", \"error\": \"unknown\"}" ;;
	*) echo "{\"name\": \"$name\", \"seconds\": $seconds}" ;;
	esac
done
`
	p := filepath.Join(t.TempDir(), "peer.sh")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPeers: a peer per setting, the first as installed: started with no
// thread option and none of the thread variables, even those the parent's
// environment has; the others with both counts, independently.
func TestPeers(t *testing.T) {
	t.Setenv("OPENBLAS_NUM_THREADS", "7")
	t.Setenv("OMP_NUM_THREADS", "7")
	ps, err := StartPeers("sh", fakePeer(t, ""), 3, PeerSettings([]int{1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	var names []string
	for _, p := range ps {
		names = append(names, p.Setting.Name)
	}
	want := []string{"as installed (1 thread, BLAS 2 threads)", "1 thread, BLAS 1 thread", "1 thread, BLAS 2 threads", "2 threads, BLAS 1 thread", "2 threads, BLAS 2 threads"}
	if !slices.Equal(names, want) {
		t.Errorf("peer settings %q, want %q", names, want)
	}
	if info := ps.Info(); info.Torch != "fake" || info.CPU != "options:; env: " {
		t.Errorf("the as-installed peer saw %q, want no thread option and no thread variable", info.CPU)
	}
	if got := ps[3].Info; got.CPU != "options: threads=2 blas=1; env: " || got.Threads != 2 || got.BLASThreads != 1 {
		t.Errorf("the peer at 2 threads, BLAS 1 thread: %+v", got)
	}
	side := ps.Side()
	w, _ := testFamilies.Parse("ffn/8x4x16/float32")
	settings := side.Settings(w)
	if side.Name != Peer || len(settings) != 5 || settings[0].Name != want[0] {
		t.Fatalf("side %q, settings %+v", side.Name, settings)
	}
	if m, _ := testFamilies.Parse("matmul/8x4x16-NT/float32"); side.Settings(m) != nil {
		t.Errorf("peer settings for a NoPeer family: %+v, want none", side.Settings(m))
	}
	if r, err := side.Measure(w, settings[1]); err != nil || r.Seconds != 0.25 {
		t.Errorf("Measure = %+v (%v), want 0.25 s", r, err)
	}
	bad := w
	bad.Name = "bad/x/float32"
	if _, err := side.Measure(bad, settings[1]); err == nil || !strings.Contains(err.Error(), "peer.sh (1 thread, BLAS 1 thread)") {
		t.Errorf("Measure of a workload the peer rejects: %v, want an error naming the script and setting", err)
	}
	if _, err := side.Measure(w, Setting{Name: "9 threads"}); err == nil {
		t.Error("Measure at a setting no peer runs: no error")
	}
	// A run measures the peer as installed, and reports it, named, when
	// it is the fastest.
	tl, err := Run([]Workload{w}, []Side{side}, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tl[Peer][w.Name][want[0]]; !ok || len(tl[Peer][w.Name]) != 5 {
		t.Errorf("a run measured the peer at %v, want the 5 settings, as installed among them", slices.Sorted(maps.Keys(tl[Peer][w.Name])))
	}
	if s, r, _ := tl.Best(Peer, w.Name); s != want[0] || r.Seconds != 0.2 {
		t.Errorf("best setting %q (%v s), want %q (0.2 s)", s, r.Seconds, want[0])
	}
}

func TestPeerErrors(t *testing.T) {
	if _, err := StartPeers("sh", fakePeer(t, "7"), 1, PeerSettings([]int{1})); err == nil || !strings.Contains(err.Error(), "ran with 7 threads and 1 BLAS threads, asked for 1 and 1") {
		t.Errorf("a peer at the wrong thread count: %v", err)
	}
	if _, err := StartPeers("sh", filepath.Join(t.TempDir(), "missing.py"), 1, PeerSettings([]int{1})); err == nil {
		t.Error("a missing script: no error")
	}
	if ps, err := StartPeers("", "missing.py", 1, PeerSettings([]int{1})); err != nil || ps != nil || ps.Side().Settings(Workload{}) != nil || ps.Info() != (PeerInfo{}) {
		t.Errorf("no python: %v (%v), want no peers and no error", ps, err)
	}
	if py, err := FindPython("none"); py != "" || err != nil {
		t.Errorf(`FindPython("none") = %q (%v)`, py, err)
	}
	if _, err := FindPython(filepath.Join(t.TempDir(), "no-python")); err == nil {
		t.Error("FindPython of a missing interpreter: no error")
	}
}
