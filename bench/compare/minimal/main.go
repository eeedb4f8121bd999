// Command minimal is bench/compare's floor: an HTTP handler doing one
// SQLite write transaction per request, with the driver (modernc.org/sqlite)
// and the settings Warden uses (WAL, synchronous NORMAL, one writer,
// BEGIN IMMEDIATE). Whatever Warden does per request costs at least this.
package main

import (
	"database/sql"
	"flag"
	"io"
	"log"
	"net/http"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18070", "listen address")
	path := flag.String("db", "minimal.db", "database file")
	flag.Parse()
	db, err := sql.Open("sqlite", "file:"+*path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, at TEXT NOT NULL, body TEXT NOT NULL)`); err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		tx, err := db.BeginTx(r.Context(), nil)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO hits (at, body) VALUES (?, ?)`, time.Now().UTC().Format(time.RFC3339Nano), string(body))
			if err == nil {
				err = tx.Commit()
			} else {
				_ = tx.Rollback()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
