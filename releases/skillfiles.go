package releases

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// SkillFile is a skill's SKILL.md as Warden loaded it. A release's skill
// set names it by Hash (SkillEntry); Warden keeps the file under that
// hash so a rollback can show what changed in it, line by line.
type SkillFile struct {
	Name string // the skill's name
	Hash string // hex SHA-256 of Body
	Body string // the file as read
}

// KeepSkillFiles stores skill files by their hash; a file already kept
// is left as it is (it is the same file). A file whose Hash is not the
// SHA-256 of its Body is refused: the hash is what releases name.
func KeepSkillFiles(ctx context.Context, db *store.DB, files []SkillFile) error {
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.Body))
		if hex.EncodeToString(sum[:]) != f.Hash {
			return fmt.Errorf("keep skill file %s: its hash %s is not the SHA-256 of its content", f.Name, f.Hash)
		}
	}
	now := store.Now()
	return db.Transact(ctx, func(tx *store.Tx) error {
		for _, f := range files {
			if _, err := tx.ExecContext(ctx, `INSERT INTO skill_files (hash, name, body, created_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (hash) DO NOTHING`, f.Hash, f.Name, f.Body, now); err != nil {
				return fmt.Errorf("keep skill file %s: %w", f.Name, err)
			}
		}
		return nil
	})
}

// SkillFileBody is the SKILL.md kept under hash, or store.ErrNotFound for
// a file Warden never loaded (a release published with a skill set made
// elsewhere).
func SkillFileBody(ctx context.Context, q store.Querier, hash string) (string, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT body FROM skill_files WHERE hash = ?`, hash).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("skill file %s: %w", hash, err)
	}
	return body, nil
}

// SkillSet reads a skill set's content as entries by name, in its order.
// A set written as plain names (releases published before skills were
// files) has entries without hashes.
func SkillSet(raw []byte) ([]SkillEntry, error) {
	if _, err := parseSkills(raw); err != nil {
		return nil, err
	}
	var names []string
	if json.Unmarshal(raw, &names) == nil {
		out := make([]SkillEntry, len(names))
		for i, n := range names {
			out[i] = SkillEntry{Name: n}
		}
		return out, nil
	}
	var entries []SkillEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, err
	}
	return entries, nil
}
