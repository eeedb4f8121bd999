package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// gcChildEnv names the database a child process of
// TestGroupCommitKillLosesNoAcknowledgedWrite writes to.
const gcChildEnv = "WARDEN_TEST_GROUP_COMMIT_CHILD"

// TestGroupCommitKillLosesNoAcknowledgedWrite starts a child process that
// writes from many goroutines at once and prints each write's number once
// Transact acknowledged it, kills it with SIGKILL (kill -9) in the middle
// of the stream, reopens the database as a restarted server would, and
// finds every acknowledged write there. The child also reports how many
// writes its commits carried, so the test knows writes were grouped.
func TestGroupCommitKillLosesNoAcknowledgedWrite(t *testing.T) {
	if os.Getenv("WARDEN_TEST_POSTGRES") != "" {
		t.Skip("group commit is SQLite's")
	}
	path := filepath.Join(t.TempDir(), "warden.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCommitKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), gcChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	// Every complete line the child wrote is an acknowledgement, those
	// after the kill signal was sent included.
	acked := map[int]bool{}
	var commits, grouped int64
	const killAfter = 3000
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "ack":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("child wrote %q", sc.Text())
			}
			acked[n] = true
		case len(f) == 3 && f[0] == "commits":
			commits, _ = strconv.ParseInt(f[1], 10, 64)
			grouped, _ = strconv.ParseInt(f[2], 10, 64)
		}
		if len(acked) == killAfter && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !killed || !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v after %d acknowledged writes, want killed by SIGKILL\n%s", err, len(acked), stderr.String())
	}

	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer db.Close()
	rows, err := db.Read().Query(`SELECT n FROM gc_acks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	present := map[int]bool{}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		present[n] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var lost []int
	for n := range acked {
		if !present[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged writes lost after kill -9, such as %v", len(lost), len(acked), lost[:min(10, len(lost))])
	}
	// The writes were in fact grouped: fewer commits than writes.
	if commits == 0 || grouped <= commits {
		t.Errorf("child's commits %d carried %d writes; want more writes than commits", commits, grouped)
	}
	t.Logf("%d acknowledged, %d in the database after the kill; %d commits carried %d writes before the last report",
		len(acked), len(present), commits, grouped)
}

// TestGroupCommitKillChild is the child process of
// TestGroupCommitKillLosesNoAcknowledgedWrite; it does nothing in a normal
// test run. It writes until it is killed.
func TestGroupCommitKillChild(t *testing.T) {
	path := os.Getenv(gcChildEnv)
	if path == "" {
		t.Skip("run by TestGroupCommitKillLosesNoAcknowledgedWrite")
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.TransactAlone(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE gc_acks (n INTEGER PRIMARY KEY, pad TEXT NOT NULL)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var mu sync.Mutex
	pad := strings.Repeat("x", 200)
	writer := func() {
		for {
			n := next.Add(1)
			err := db.Transact(ctx, func(tx *Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_acks (n, pad) VALUES (?, ?)`, n, pad)
				return err
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, "write", n, err)
				os.Exit(1)
			}
			line := fmt.Sprintf("ack %d\n", n)
			if n%100 == 0 {
				line += fmt.Sprintf("commits %d %d\n", db.gc.commits.Load(), db.gc.grouped.Load())
			}
			mu.Lock()
			_, _ = os.Stdout.WriteString(line) // unbuffered: the parent sees it at once
			mu.Unlock()
		}
	}
	for range 32 {
		go writer()
	}
	select {}
}
