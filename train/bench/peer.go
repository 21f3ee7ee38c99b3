package bench

// The peer protocol: the other framework's side runs in one process per
// setting that times the workloads it is sent one at a time, so that a run
// alternates the sides workload by workload with the framework imported
// once per setting. The peer is started as
//
//	<python> <script> --serve --reps <n> [--threads <t>] [--blas-threads <b>]
//
// with none of the thread counts in its environment (threadVars): without
// --threads it leaves its intra-op threads as installed, without
// --blas-threads its BLAS's (the script sets OPENBLAS_NUM_THREADS and
// MKL_NUM_THREADS itself, before importing torch). It prints a PeerInfo
// as a JSON line, then answers each workload name read from stdin with a
// JSON line {"name": …, "seconds": …} (or {"name": …, "error": …}), and
// exits at the end of its input. examples/benchmark/bench_torch.py is PyTorch's.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// FindPython returns the python3 with torch to use, or "" (with a message
// on stderr) when there is none: choice is a python3 to use, "auto" for
// python3, then /usr/bin/python3, or "none".
func FindPython(choice string) (string, error) {
	if choice == "none" {
		return "", nil
	}
	candidates := []string{choice}
	if choice == "auto" {
		candidates = []string{"python3", "/usr/bin/python3"}
	}
	for _, py := range candidates {
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py, nil
		}
	}
	if choice != "auto" {
		return "", fmt.Errorf("-python %s: cannot import torch", choice)
	}
	fmt.Fprintln(os.Stderr, "PyTorch side skipped: no python3 with torch (Debian: apt-get install python3-torch)")
	return "", nil
}

// PeerInfo is what the peer prints first: what it runs with, as found
// after import.
type PeerInfo struct {
	Torch   string `json:"torch"`
	BLAS    string `json:"blas"` // the BLAS-like libraries loaded
	CPU     string `json:"cpu_capability"`
	Threads int    `json:"threads"` // intra-op
	Interop int    `json:"interop_threads"`
	// BLASThreads is the BLAS's thread count as the BLAS reports it
	// (openblas_get_num_threads), 0 where the peer cannot tell.
	BLASThreads int `json:"blas_threads"`
}

// String is the threads of i, e.g. "1 thread, BLAS 2 threads, 1 inter-op".
func (i PeerInfo) String() string {
	return fmt.Sprintf("%s, BLAS %s, %d inter-op", plural(i.Threads, "thread"), blasCount(i.BLASThreads), i.Interop)
}

// PeerProcess is a peer at one setting (see the protocol above).
type PeerProcess struct {
	Setting Setting
	Info    PeerInfo
	name    string // the script's file name, for errors
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
}

// StartPeer starts script under py at setting s (PeerSettings), timing
// reps runs per workload, and reads its PeerInfo, checking that the thread
// counts asked for took effect. The as-installed setting's name gets what
// the peer found, e.g. "as installed (1 thread, BLAS 2 threads)".
func StartPeer(py, script string, reps int, s Setting) (*PeerProcess, error) {
	args := []string{script, "--serve", "--reps", strconv.Itoa(reps)}
	if s.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(s.Threads))
	}
	if s.BLASThreads > 0 {
		args = append(args, "--blas-threads", strconv.Itoa(s.BLASThreads))
	}
	cmd := exec.Command(py, args...)
	cmd.Env = settingEnv(os.Environ(), s)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", py, script, err)
	}
	p := &PeerProcess{Setting: s, name: filepath.Base(script), cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if err := p.read(&p.Info); err != nil {
		p.Close()
		return nil, err
	}
	i := p.Info
	if s.Threads > 0 && i.Threads != s.Threads || s.BLASThreads > 0 && i.BLASThreads > 0 && i.BLASThreads != s.BLASThreads {
		p.Close()
		return nil, fmt.Errorf("%s ran with %d threads and %d BLAS threads, asked for %d and %d", script, i.Threads, i.BLASThreads, s.Threads, s.BLASThreads)
	}
	if s.Threads == 0 && s.BLASThreads == 0 {
		p.Setting.Name = fmt.Sprintf("%s (%s, BLAS %s)", s.Name, plural(i.Threads, "thread"), blasCount(i.BLASThreads))
	}
	return p, nil
}

// read decodes the peer's next line into v.
func (p *PeerProcess) read(v any) error {
	if !p.out.Scan() {
		return fmt.Errorf("%s (%s) stopped: %v", p.name, p.Setting.Name, p.out.Err())
	}
	if err := json.Unmarshal(p.out.Bytes(), v); err != nil {
		return fmt.Errorf("%s (%s) printed %q: %w", p.name, p.Setting.Name, p.out.Text(), err)
	}
	return nil
}

// Time returns the peer's seconds per step for workload w.
func (p *PeerProcess) Time(w string) (float64, error) {
	if _, err := fmt.Fprintln(p.in, w); err != nil {
		return 0, fmt.Errorf("%s (%s): %w", p.name, p.Setting.Name, err)
	}
	var reply struct {
		Name    string  `json:"name"`
		Seconds float64 `json:"seconds"`
		Error   string  `json:"error"`
	}
	if err := p.read(&reply); err != nil {
		return 0, err
	}
	if reply.Error != "" || reply.Name != w || reply.Seconds <= 0 {
		return 0, fmt.Errorf("%s (%s) asked for %s answered %+v", p.name, p.Setting.Name, w, reply)
	}
	return reply.Seconds, nil
}

// Close ends the peer: end of input makes it exit.
func (p *PeerProcess) Close() error {
	p.in.Close()
	return p.cmd.Wait()
}

// Peers are the peer processes of a run, one per setting.
type Peers []*PeerProcess

// StartPeers starts a peer per setting (StartPeer); on an error it closes
// those it started. No python (py == "") starts none.
func StartPeers(py, script string, reps int, settings []Setting) (Peers, error) {
	if py == "" {
		return nil, nil
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("the PyTorch side's script: %w (run from the module root or give -script)", err)
	}
	var ps Peers
	for _, s := range settings {
		p, err := StartPeer(py, script, reps, s)
		if err != nil {
			ps.Close()
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// Close closes every peer.
func (ps Peers) Close() {
	for _, p := range ps {
		p.Close()
	}
}

// blasCount is n threads, or "threads unknown" for 0.
func blasCount(n int) string {
	if n == 0 {
		return "threads unknown"
	}
	return plural(n, "thread")
}

// Info is the first peer's PeerInfo; zero without peers.
func (ps Peers) Info() PeerInfo {
	if len(ps) == 0 {
		return PeerInfo{}
	}
	return ps[0].Info
}

// Side is the peer's side of a run (Run): every peer's setting, each timed
// by its own process, for every workload but those of NoPeer families.
func (ps Peers) Side() Side {
	var settings []Setting
	for _, p := range ps {
		settings = append(settings, p.Setting)
	}
	return Side{Name: Peer, Settings: func(w Workload) []Setting {
		if w.Family != nil && w.Family.NoPeer {
			return nil
		}
		return settings
	},
		Measure: func(w Workload, s Setting) (Result, error) {
			for _, p := range ps {
				if p.Setting.Name == s.Name {
					sec, err := p.Time(w.Name)
					return Result{Seconds: sec}, err
				}
			}
			return Result{}, fmt.Errorf("no peer runs setting %q", s.Name)
		}}
}
