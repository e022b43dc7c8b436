package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/settdev/sett/internal/learningsfile"
)

// Folders of a vault.
const (
	NeedsAction      = "Needs_Action"
	InProgress       = "In_Progress"
	PendingApproval  = "Pending_Approval"
	Approved         = "Approved"
	Rejected         = "Rejected"
	NeedsHumanReview = "Needs_Human_Review"
	Done             = "Done"
	Failed           = "Failed"
	MemoryDir        = "memory"
)

// Files at the vault root.
const (
	AgentMemoryFile = learningsfile.FileName
	HandbookFile    = "Company_Handbook.md"
	DashboardFile   = "Dashboard.md"
	SharedMemory    = "memory.md"
	// stateFile remembers which learnings were appended to
	// Agent_Memory.md, so that a learning a person pruned is not appended
	// again. Hidden: the bridge ignores it as input.
	stateFile = ".sett_vault.json"
)

// Folders lists every folder Scaffold creates.
func Folders() []string {
	return []string{NeedsAction, InProgress, PendingApproval, Approved, Rejected,
		NeedsHumanReview, Done, Failed, MemoryDir}
}

// HandbookStub is the starter Company_Handbook.md.
const HandbookStub = `# Company Handbook

Rules of engagement every agent reads before it works (memory.handbook).
Write them as short, plain rules, for example:

- Be polite and concise in every message.
- Never commit to payments, prices or deadlines without a human's approval.
`

// Scaffold creates the vault layout at path: the folders, the learning loop's
// Agent_Memory.md starter, a Company_Handbook.md stub and a first
// Dashboard.md. It is idempotent: it only creates what is missing and
// never changes an existing file. It returns the paths it created.
// Errors: a path that exists but is not a folder, or a file system error.
func Scaffold(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("vault: no path (set vault.path in sett.yml)")
	}
	var created []string
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("vault: %s exists and is not a folder: choose another vault.path", path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		created = append(created, path)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("vault: create %s: %w", path, err)
	}
	for _, d := range Folders() {
		p := filepath.Join(path, d)
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return created, fmt.Errorf("vault: %s exists and is not a folder: move it away and run again", p)
		case !errors.Is(err, fs.ErrNotExist):
			return created, fmt.Errorf("vault: %w", err)
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return created, fmt.Errorf("vault: create %s: %w", p, err)
		}
		created = append(created, p)
	}
	files := []struct{ name, text string }{
		{AgentMemoryFile, learningsfile.Template},
		{HandbookFile, HandbookStub},
		{DashboardFile, RenderDashboard(DashboardData{})},
	}
	for _, f := range files {
		p := filepath.Join(path, f.name)
		if _, err := os.Lstat(p); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return created, fmt.Errorf("vault: %w", err)
		}
		if err := writeAtomic(p, []byte(f.text)); err != nil {
			return created, err
		}
		created = append(created, p)
	}
	return created, nil
}
