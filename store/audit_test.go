package store

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestAuditRetention(t *testing.T) {
	s := testStore(t)
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	setClock(t, &at)
	oldMax := AuditMaxRecords
	AuditMaxRecords = 10
	t.Cleanup(func() { AuditMaxRecords = oldMax })

	// 25 records in three appends: only the newest 10 stay.
	for batch := range 3 {
		var recs []AuditRecord
		for i := range 5 + batch*5 {
			recs = append(recs, AuditRecord{Time: at, Agent: fmt.Sprintf("a%d", batch), Endpoint: "e", Command: fmt.Sprintf("c.%d.%d", batch, i), Outcome: "succeeded"})
		}
		if err := s.AppendAudit(recs...); err != nil {
			t.Fatal(err)
		}
	}
	all, total, err := s.Audit(AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 || total != 10 || all[0].Command != "c.2.5" || all[9].Command != "c.2.14" {
		t.Fatalf("kept %d (%d): first %+v", len(all), total, all)
	}

	// Age: a record older than AuditMaxAge goes at the next append.
	at = at.Add(AuditMaxAge + time.Second)
	if err := s.AppendAudit(AuditRecord{Agent: "late", Endpoint: "e", Command: "c.late", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	all, _, err = s.Audit(AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Agent != "late" || !all[0].Time.Equal(at) {
		t.Fatalf("after aging: %+v", all)
	}
}

func TestAuditQuery(t *testing.T) {
	s := testStore(t)
	t0 := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	at := t0.Add(10 * time.Hour)
	setClock(t, &at)
	var recs []AuditRecord
	for i := range 10 {
		agent := "x"
		if i%2 == 0 {
			agent = "y"
		}
		recs = append(recs, AuditRecord{Time: t0.Add(time.Duration(i) * time.Hour), Agent: agent, Endpoint: "e", Command: fmt.Sprint("c", i), Outcome: "succeeded"})
	}
	if err := s.AppendAudit(recs...); err != nil {
		t.Fatal(err)
	}
	got, total, err := s.Audit(AuditQuery{Agent: "y", Since: t0.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(got) != 3 || got[0].Command != "c4" || got[2].Command != "c8" {
		t.Errorf("agent y since 3h: %d %+v", total, got)
	}
	got, total, _ = s.Audit(AuditQuery{Limit: 2})
	if total != 10 || len(got) != 2 || got[0].Command != "c8" || got[1].Command != "c9" {
		t.Errorf("limit 2: %d %+v", total, got)
	}
	// agent list's last use comes from the log.
	if _, err := s.AddAgent("y", "e"); err != nil {
		t.Fatal(err)
	}
	agents, _ := s.Agents()
	if len(agents) != 1 || !agents[0].LastUsed.Equal(t0.Add(8*time.Hour)) {
		t.Errorf("last used: %+v", agents)
	}
	// An identity provider's agent of the same name is not the Rukh agent.
	if err := s.AppendAudit(AuditRecord{Time: t0.Add(20 * time.Hour), Agent: "y", Credential: "oauth", Issuer: "https://idp.example", Endpoint: "e", Command: "c20", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	agents, _ = s.Agents()
	if len(agents) != 1 || !agents[0].LastUsed.Equal(t0.Add(8*time.Hour)) {
		t.Errorf("last used after an oauth agent's call: %+v", agents)
	}
}

func TestAuditWriter(t *testing.T) {
	s := testStore(t)
	w := s.NewAuditWriter(t.Logf)
	for i := range 300 {
		w.Add(AuditRecord{Endpoint: "e", Command: fmt.Sprint("c", i), Outcome: "succeeded"})
	}
	w.Close()
	got, total, err := s.Audit(AuditQuery{})
	if err != nil || total != 300 || got[299].Command != "c299" {
		t.Fatalf("%d records, %v", total, err)
	}
}

// TestAuditWriterPrompt: a record that comes after a quiet spell is
// written at once, so `rukh audit` run as a call returns shows it; records
// that follow closely wait for the rest of the spacing and share one
// transaction; Close writes what is still waiting.
func TestAuditWriterPrompt(t *testing.T) {
	s := testStore(t)
	if err := s.AppendAudit(AuditRecord{Endpoint: "e", Command: "c.setup", Outcome: "succeeded"}); err != nil {
		t.Fatal(err) // the bucket exists before the bubble starts
	}
	count := func() int {
		t.Helper()
		_, total, err := s.Audit(AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return total - 1
	}
	synctest.Test(t, func(t *testing.T) {
		w := s.NewAuditWriter(t.Logf)
		defer w.Close()
		add := func(name string) { w.Add(AuditRecord{Endpoint: "e", Command: name, Outcome: "succeeded"}) }
		steps := []struct {
			name  string
			do    func()
			after time.Duration // fake time passed before counting
			want  int
		}{
			{"the first record is written at once", func() { add("c.1") }, 0, 1},
			{"records right after it wait", func() { add("c.2"); add("c.3") }, 0, 1},
			{"and are written at the end of the spacing", func() {}, auditFlushEvery, 3},
			{"after a quiet spell, at once again", func() { time.Sleep(auditFlushEvery); add("c.4") }, 0, 4},
			{"still waiting at Close: written", func() { add("c.5"); w.Close() }, 0, 5},
		}
		for _, st := range steps {
			st.do()
			time.Sleep(st.after)
			synctest.Wait()
			if got := count(); got != st.want {
				t.Fatalf("%s: %d record(s) written, want %d", st.name, got, st.want)
			}
		}
	})
}

// TestAuditWriterBound: at most auditQueue records wait (the rest are
// dropped and counted), and Close writes every waiting batch at once, not
// one per spacing.
func TestAuditWriterBound(t *testing.T) {
	s := testStore(t)
	if err := s.AppendAudit(AuditRecord{Endpoint: "e", Command: "c.setup", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		// A writer not yet running, so nothing is taken while adding.
		w := &AuditWriter{s: s, logf: t.Logf, wake: make(chan struct{}, 1), done: make(chan struct{})}
		for i := range auditQueue + 5 {
			w.Add(AuditRecord{Endpoint: "e", Command: fmt.Sprint("c", i), Outcome: "succeeded"})
		}
		if n, q := w.dropped.Load(), len(w.queue); n != 5 || q != auditQueue {
			t.Errorf("%d record(s) dropped and %d waiting, want 5 and %d", n, q, auditQueue)
		}
		w.queue = w.queue[:auditQueue-10] // the last batch not full
		go w.run()
		t0 := time.Now()
		w.Close()
		if d := time.Since(t0); d >= auditFlushEvery {
			t.Errorf("Close took %v of fake time: it waited out the spacing", d)
		}
	})
	_, total, err := s.Audit(AuditQuery{})
	if err != nil || total != 1+auditQueue-10 {
		t.Fatalf("%d records, want %d: %v", total, 1+auditQueue-10, err)
	}
}
