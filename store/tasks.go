package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Task records (docs/tasks.md): one per background invocation, from its start
// until ttl after its end: a working task is never purged, however long it
// runs, so its result is never lost and it counts against maxTasks until it
// ends. They live in their own bbolt file beside
// the store (TasksDBName), so that a running task's status writes neither
// wait for nor hold the store's lock, nor change its Stamp (serve-mcp keeps
// what it read while the stamp is unchanged). A record names the process that runs it
// (its owner); the owner holds home/holds/task-owner-ID for its whole life,
// so any process can tell a live owner from a dead one without trusting
// pids, which are reused.
var bucketTasks = []byte("tasks") // task id → taskRec JSON

// TasksDBName is the task records' file inside the home.
const TasksDBName = "tasks.db"

var taskDBs sync.Map // tasks.db path → *Store

// taskDB is the handle on the home's task file.
func (s *Store) taskDB() *Store {
	if e, ok := s.be.(sharedBackend); ok {
		return e.taskStore(s)
	}
	path := filepath.Join(s.home, TasksDBName)
	if t, ok := taskDBs.Load(path); ok {
		return t.(*Store)
	}
	t := &Store{home: s.home, path: path, Timeout: s.Timeout}
	t.be = boltFile{t}
	got, _ := taskDBs.LoadOrStore(path, t)
	return got.(*Store)
}

// HoldTaskOwner is the hold kind a process running tasks holds (holds.go).
const HoldTaskOwner = "task-owner"

// Task states. Working is the only state that changes; the others are final.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// MaxStatusMessage bounds a task's statusMessage, in bytes.
const MaxStatusMessage = 1024

// Reasons the store records for tasks whose owner is gone.
const (
	ReasonOwnerGone = "the process that ran the task ended before it finished"
)

// ErrTaskNotFound is wrapped by every lookup of an unknown, expired or
// foreign task id: callers cannot tell these apart.
var ErrTaskNotFound = errors.New("unknown, or purged after its ttl")

// ErrTaskLimit is wrapped by CreateTask's refusal when the endpoint already
// has maxTasks running and kept tasks.
var ErrTaskLimit = errors.New("no room for another")

// TaskOwner is the process that runs a task.
type TaskOwner struct {
	ID      string    `json:"id"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// Task is one task record. Version increases with every write: the
// compare-and-swap a shared backend uses (UpdateTask).
type Task struct {
	ID            string    `json:"id"`
	Endpoint      string    `json:"endpoint"`
	Agent         string    `json:"agent"`
	Issuer        string    `json:"issuer,omitempty"` // the identity provider of the oauth agent that started it; "" for a Rukh agent
	Command       string    `json:"command"`
	Tool          string    `json:"tool"`
	State         string    `json:"state"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// EndedAt is when the task reached its final state; its ttl counts
	// from there.
	EndedAt time.Time `json:"endedAt,omitzero"`
	TTLMs   int64     `json:"ttlMs"`
	Owner   TaskOwner `json:"owner"`
	// CancelRequested is set by a cancel from any process; the owner
	// notices it and stops the child.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// The invocation's outcome once the task is final.
	InvocationID  string         `json:"invocationId,omitempty"`
	Outcome       string         `json:"outcome,omitempty"`
	Reason        string         `json:"reason,omitempty"`
	CommandResult jsontext.Value `json:"commandResult,omitempty"`
	Version       uint64         `json:"version"`
}

// ExpiresAt is when the record is purged: ttl after the task ended. Zero
// while it works: a working task is never purged.
func (t Task) ExpiresAt() time.Time {
	if !t.Final() {
		return time.Time{}
	}
	end := t.EndedAt
	if end.IsZero() { // recorded before the end was: its last write is the end
		end = t.UpdatedAt
	}
	return end.Add(time.Duration(t.TTLMs) * time.Millisecond)
}

// RetentionMs is how long after its creation the record is kept, as the
// Tasks extension's ttlMs counts it: exact once the task has ended; while
// it works, the least it will be kept (ttl after its last update), which
// grows as it runs.
func (t Task) RetentionMs() int64 {
	if t.Final() {
		return t.ExpiresAt().Sub(t.CreatedAt).Milliseconds()
	}
	return t.UpdatedAt.Sub(t.CreatedAt).Milliseconds() + t.TTLMs
}

// Final reports whether the task has ended.
func (t Task) Final() bool { return t.State != TaskWorking }

func (t Task) expired(now time.Time) bool { return t.Final() && !now.Before(t.ExpiresAt()) }

// TaskStore is what task runners and the owner verbs need. The bbolt Store
// implements it with one transaction per call; a shared backend implements
// UpdateTask as a compare-and-swap loop on the record's version.
type TaskStore interface {
	// CreateTask stores t (state working) durably before it returns,
	// refusing with ErrTaskLimit when t.Endpoint already has maxTasks
	// unexpired tasks. Expired tasks are purged first.
	CreateTask(t Task, maxTasks int) error
	// Task returns an unexpired task; ErrTaskNotFound otherwise. A working
	// task whose owner process is gone is recorded cancelled first
	// (settleOrphan): every reader of one task sees the same state.
	Task(id string) (Task, error)
	// UpdateTask applies fn to the current record and stores it with the
	// next version, unless fn returns false; it returns the record as
	// stored. The write that makes the task final sets its EndedAt.
	UpdateTask(id string, fn func(*Task) bool) (Task, error)
	// Tasks lists the unexpired tasks of endpoint ("" for all), newest
	// first, as recorded: it does not look at owners (RecoverTasks does).
	Tasks(endpoint string) ([]Task, error)
}

var _ TaskStore = (*Store)(nil)

// NewTaskID returns an unguessable task id (128 random bits).
func NewTaskID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("store: no randomness: " + err.Error())
	}
	return "t-" + hex.EncodeToString(b[:])
}

// ValidTaskID reports whether id has the form NewTaskID makes.
// It is checked by hand: t-, then 32 lower-case hex digits.
func ValidTaskID(id string) bool {
	if len(id) != 34 || id[:2] != "t-" {
		return false
	}
	for i := 2; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// BecomeTaskOwner makes this process an owner of tasks: it holds the owner
// hold until release is called (or the process dies).
func (s *Store) BecomeTaskOwner() (TaskOwner, func(), error) {
	o := TaskOwner{ID: NewTaskID()[2:], PID: os.Getpid(), Started: clock().UTC()}
	release, err := s.Hold(HoldTaskOwner, o.ID)
	if err != nil {
		return TaskOwner{}, nil, err
	}
	return o, release, nil
}

// ownerGone reports whether no live process holds owner id's hold. An
// unknown answer (a home nobody may write) counts as alive.
func (s *Store) ownerGone(id string) bool {
	return s.TryRemoveHeld(HoldTaskOwner, id, func() error { return nil }) == nil
}

func taskNotFound(id string) error {
	return kernel.Errorf(kernel.CodeNotFound, "no task %q", id).Wrap(ErrTaskNotFound).
		WithHint("'rukh tasks' lists the tasks; a task is purged once its ttl has passed after it ended")
}

func getTask(b bucket, id string) (*Task, error) { return getJSON[Task](b, "task", id) }

// purgeTasks deletes expired and unreadable records.
func purgeTasks(b bucket, now time.Time) (int, error) {
	return deleteWhere(b, func(_, v []byte) bool {
		var t Task
		return json.Unmarshal(v, &t) != nil || t.expired(now)
	})
}

// CreateTask implements TaskStore.
func (s *Store) CreateTask(t Task, maxTasks int) error {
	if !ValidTaskID(t.ID) {
		return kernel.Errorf(kernel.CodeInternal, "invalid task id %q", t.ID)
	}
	now := clock().UTC()
	t.State, t.CreatedAt, t.UpdatedAt, t.Version = TaskWorking, now, now, 1
	return s.taskDB().update(func(tx txn) error {
		b, err := tx.CreateBucketIfNotExists(bucketTasks)
		if err != nil {
			return err
		}
		if _, err := purgeTasks(b, now); err != nil {
			return err
		}
		n := 0
		if err := b.ForEach(func(_, v []byte) error {
			var o Task
			if json.Unmarshal(v, &o) == nil && o.Endpoint == t.Endpoint {
				n++
			}
			return nil
		}); err != nil {
			return err
		}
		if n >= maxTasks {
			return kernel.Errorf(kernel.CodeUnavailable, "endpoint %q has %d tasks (running and kept), its maxTasks", t.Endpoint, n).Wrap(ErrTaskLimit).
				WithHint("wait for a task to expire, cancel one ('rukh tasks cancel ID'), or raise tasks.maxTasks in the profile")
		}
		if b.Get([]byte(t.ID)) != nil {
			return kernel.Errorf(kernel.CodeConflict, "task %q exists", t.ID)
		}
		return putJSON(b, []byte(t.ID), t)
	})
}

// Task implements TaskStore.
func (s *Store) Task(id string) (Task, error) {
	var out *Task
	if !ValidTaskID(id) {
		return Task{}, taskNotFound(id)
	}
	_, err := s.taskDB().view(func(tx txn) error {
		b := tx.Bucket(bucketTasks)
		if b == nil {
			return nil
		}
		var err error
		out, err = getTask(b, id)
		return err
	})
	if err != nil {
		return Task{}, err
	}
	if out == nil || out.expired(clock()) {
		return Task{}, taskNotFound(id)
	}
	t, _, err := s.settleOrphan(*out, s.ownerGone)
	return t, err
}

// UpdateTask implements TaskStore.
func (s *Store) UpdateTask(id string, fn func(*Task) bool) (Task, error) {
	var out Task
	if !ValidTaskID(id) {
		return Task{}, taskNotFound(id)
	}
	err := s.taskDB().update(func(tx txn) error {
		b, err := tx.CreateBucketIfNotExists(bucketTasks)
		if err != nil {
			return err
		}
		t, err := getTask(b, id)
		if err != nil {
			return err
		}
		now := clock().UTC()
		if t == nil || t.expired(now) {
			return taskNotFound(id)
		}
		wasFinal := t.Final()
		if !fn(t) {
			out = *t
			return nil
		}
		t.Version++
		t.UpdatedAt = now
		if !wasFinal && t.Final() {
			t.EndedAt = now
		}
		if len(t.StatusMessage) > MaxStatusMessage {
			t.StatusMessage = truncateUTF8(t.StatusMessage, MaxStatusMessage)
		}
		out = *t
		return putJSON(b, []byte(id), t)
	})
	return out, err
}

// Tasks implements TaskStore.
func (s *Store) Tasks(endpoint string) ([]Task, error) {
	var out []Task
	now := clock()
	_, err := s.taskDB().view(func(tx txn) error {
		b := tx.Bucket(bucketTasks)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var t Task
			if json.Unmarshal(v, &t) != nil || t.expired(now) || (endpoint != "" && t.Endpoint != endpoint) {
				return nil
			}
			out = append(out, t)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// PurgeTasks deletes the expired task records and returns how many.
func (s *Store) PurgeTasks() (int, error) {
	var n int
	err := s.taskDB().update(func(tx txn) error {
		b, err := tx.CreateBucketIfNotExists(bucketTasks)
		if err != nil {
			return err
		}
		n, err = purgeTasks(b, clock())
		return err
	})
	return n, err
}

// settleOrphan is the one rule for a task whose owner is gone: a working
// task nobody runs any more (its process was killed without a chance to
// record it) is recorded cancelled, saying why, so that it never stays
// working forever. gone tells whether an owner is gone. It returns the
// record as stored and whether this call cancelled it.
func (s *Store) settleOrphan(t Task, gone func(owner string) bool) (Task, bool, error) {
	if t.Final() || !gone(t.Owner.ID) {
		return t, false, nil
	}
	var cancelled bool
	got, err := s.UpdateTask(t.ID, func(r *Task) bool {
		cancelled = false // fn runs again when a shared store's write loses a race
		if r.Final() || r.Owner.ID != t.Owner.ID {
			return false
		}
		r.State, r.Outcome, r.Reason = TaskCancelled, string(kernel.Cancelled), ReasonOwnerGone
		cancelled = true
		return true
	})
	return got, cancelled, err
}

// RecoverTasks settles every working task whose owner is gone
// (settleOrphan) and purges expired records. It returns how many it
// cancelled. self, when set, is the caller's own owner id, never gone.
func (s *Store) RecoverTasks(self string) (int, error) {
	tasks, err := s.Tasks("")
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	gone := func(owner string) bool {
		if owner == self {
			return false
		}
		g, ok := seen[owner]
		if !ok {
			g = s.ownerGone(owner)
			seen[owner] = g
		}
		return g
	}
	n := 0
	for _, t := range tasks {
		_, cancelled, err := s.settleOrphan(t, gone)
		if cancelled {
			n++
		}
		if err != nil && !errors.Is(err, ErrTaskNotFound) {
			return n, err
		}
	}
	if exists, _ := s.taskDB().Exists(); exists {
		if _, err := s.PurgeTasks(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// RequestTaskCancel asks for task id to stop: a working task gets the
// cancel flag its owner acts on, or is recorded cancelled at once when its
// owner is gone. A final task is left as it is. It returns the record.
func (s *Store) RequestTaskCancel(id string) (Task, error) {
	t, err := s.UpdateTask(id, func(r *Task) bool {
		if r.Final() || r.CancelRequested {
			return false
		}
		r.CancelRequested = true
		return true
	})
	if err != nil {
		return t, err
	}
	t, _, err = s.settleOrphan(t, s.ownerGone)
	return t, err
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
