package kernel

import "github.com/go-json-experiment/json/jsontext"

// OutcomeStarted is what a call that became a task answers at once to a
// client of the explicit job family (docs/tasks.md), with the task's id in
// taskId. It is never an invocation's outcome: the task's result, fetched
// later, carries one of Outcomes.
const OutcomeStarted Outcome = "started"

// StartedOutputSchema is OutputSchema for a tool whose calls may become
// tasks of the job family: outcome may also be started, with a taskId.
func StartedOutputSchema(c *Command) (jsontext.Value, error) { return outputSchema(c, true) }
