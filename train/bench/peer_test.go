package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePeer is a peer in sh speaking the protocol: its info names the
// OMP_NUM_THREADS it was given as its CPU capability and reports threads
// (the --threads value, $5, unless lie is set), then every workload takes
// 0.25 s except names starting "bad", an error.
func fakePeer(t *testing.T, lie string) string {
	threads := "$5"
	if lie != "" {
		threads = lie
	}
	script := `echo "{\"torch\": \"fake\", \"blas\": \"none\", \"cpu_capability\": \"OMP $OMP_NUM_THREADS\", \"threads\": ` + threads + `, \"interop_threads\": 1}"
while read name; do
	case "$name" in
	bad*) echo "{\"name\": \"$name\", \"error\": \"unknown\"}" ;;
	*) echo "{\"name\": \"$name\", \"seconds\": 0.25}" ;;
	esac
done
`
	p := filepath.Join(t.TempDir(), "peer.sh")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPeers(t *testing.T) {
	ps, err := StartPeers("sh", fakePeer(t, ""), 3, PeerSettings([]int{1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	if info := ps.Info(); len(ps) != 2 || info.Torch != "fake" || info.Threads != 1 || info.CPU != "OMP 1" || ps[1].Info.CPU != "OMP 2" {
		t.Errorf("%d peers, first %+v, second %+v; want 2 with threads and OMP_NUM_THREADS 1 and 2", len(ps), info, ps[1].Info)
	}
	side := ps.Side()
	w, _ := testFamilies.Parse("ffn/8x4x16/float32")
	settings := side.Settings(w)
	if side.Name != Peer || len(settings) != 2 || settings[1].Name != "2 threads" {
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
	if _, err := side.Measure(bad, settings[0]); err == nil || !strings.Contains(err.Error(), "peer.sh (1 thread)") {
		t.Errorf("Measure of a workload the peer rejects: %v, want an error naming the script and setting", err)
	}
	if _, err := side.Measure(w, Setting{Name: "9 threads"}); err == nil {
		t.Error("Measure at a setting no peer runs: no error")
	}
}

func TestPeerErrors(t *testing.T) {
	if _, err := StartPeers("sh", fakePeer(t, "7"), 1, PeerSettings([]int{1})); err == nil || !strings.Contains(err.Error(), "ran with 7 threads, asked for 1") {
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
