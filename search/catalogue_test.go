package search_test

import (
	"fmt"
	"strings"
)

// The generated catalogue of the ranking test: services × resources × verbs
// with real-looking ids (aws.ec2.instances.start, k8s.pods.delete,
// github.issues.comment-add) and summaries, descriptions and parameters
// written from templates. It is deterministic: the same 10,000 commands in
// the same order every time.

// genCommand is one generated command declaration, as much of it as the
// ranking reads.
type genCommand struct {
	Package     string // one package per service: gen.aws-ec2
	ID          string
	Path        []string
	Title       string
	Summary     string
	Description string
	Params      []genParam
}

type genParam struct{ ID, Description string }

// genService is one service (or a product of a provider): its id path, the
// name people call it by, the parameters every command of it takes, and its
// resources.
type genService struct {
	path      []string
	display   string
	params    []genParam
	resources []genResource
}

// genResource is a resource of a service: its plural kebab id, its
// singular noun phrase, and its kind (which verbs it has).
type genResource struct {
	id, noun, kind string
}

// genVerb is one verb: its id (kebab), the summary and description
// templates (%[1]s the article + noun, %[2]s the noun, %[3]s the service's
// display name, %[4]s the plural noun) and its own parameters.
type genVerb struct {
	id, summary, description string
	params                   []genParam
}

var (
	pRegion    = genParam{"region", "the region, such as us-east-1"}
	pProject   = genParam{"project", "the Google Cloud project id"}
	pSubscr    = genParam{"subscription", "the Azure subscription id"}
	pGroup     = genParam{"resource-group", "the Azure resource group"}
	pNamespace = genParam{"namespace", "the Kubernetes namespace (default: default)"}
	pContext   = genParam{"context", "the kubeconfig context"}
	pRepo      = genParam{"repo", "the repository, as owner/name"}
	pOrg       = genParam{"org", "the organisation"}
	pWorkspace = genParam{"workspace", "the workspace"}
	pAccount   = genParam{"account", "the account id"}
	pSite      = genParam{"site", "the site"}
	pZone      = genParam{"zone", "the zone"}
	pEnv       = genParam{"environment", "the environment, such as production or staging"}
	pProjectK  = genParam{"project-key", "the project key, such as OPS"}
	pInstance  = genParam{"instance-url", "the instance URL"}
	pMount     = genParam{"mount", "the secrets engine mount path"}
	pDatabase  = genParam{"database", "the database name"}
	pHost      = genParam{"host", "the server host name"}
)

var genKinds = map[string][]genVerb{
	"machine": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s, optionally filtered by state or tag.", []genParam{{"state", "only %[4]s in this state (running, stopped)"}, {"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s: its state, size, addresses and tags.", nil},
		{"create", "Create %[1]s", "Creates (launches) a new %[2]s in %[3]s from an image and a size.", []genParam{{"name", "the new %[2]s's name"}, {"image", "the image to boot from"}, {"size", "the size or type"}}},
		{"delete", "Delete %[1]s", "Deletes (terminates) %[1]s of %[3]s; its disks go with it unless kept.", []genParam{{"force", "do not wait for a graceful shutdown"}}},
		{"start", "Start %[1]s", "Starts a stopped %[2]s of %[3]s.", nil},
		{"stop", "Stop %[1]s", "Stops a running %[2]s of %[3]s (it keeps its disks).", []genParam{{"force", "stop at once, without a graceful shutdown"}}},
		{"restart", "Restart %[1]s", "Restarts (reboots) a running %[2]s of %[3]s.", nil},
		{"resize", "Resize %[1]s", "Changes the size (type) of %[1]s of %[3]s; it restarts.", []genParam{{"size", "the new size or type"}}},
		{"tag-add", "Add a tag to %[1]s", "Adds a tag (key=value label) to %[1]s of %[3]s.", []genParam{{"tag", "the tag, as key=value"}}},
		{"tag-remove", "Remove a tag from %[1]s", "Removes a tag from %[1]s of %[3]s.", []genParam{{"key", "the tag's key"}}},
		{"logs-get", "Get the console logs of %[1]s", "Returns the latest console output (serial log) of %[1]s of %[3]s.", []genParam{{"lines", "at most this many lines"}}},
		{"metrics-get", "Get the metrics of %[1]s", "Returns CPU, memory, disk and network metrics of %[1]s of %[3]s over a time range.", []genParam{{"since", "the start of the range, such as 1h"}}},
		{"snapshot-create", "Snapshot %[1]s", "Takes a snapshot (backup image) of the disks of %[1]s of %[3]s.", []genParam{{"description", "a note kept with the snapshot"}}},
		{"snapshot-restore", "Restore %[1]s from a snapshot", "Restores %[1]s of %[3]s from one of its snapshots.", []genParam{{"snapshot-id", "the snapshot's id"}}},
		{"ssh-key-add", "Add an SSH key to %[1]s", "Authorises an SSH public key on %[1]s of %[3]s.", []genParam{{"public-key", "the SSH public key"}}},
	},
	"storage": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s, with their size and creation date.", []genParam{{"prefix", "only names starting with this prefix"}, {"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s: size, owner, policy and tags.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s and everything in it.", []genParam{{"force", "delete even when not empty"}}},
		{"copy", "Copy %[1]s", "Copies %[1]s of %[3]s to another place.", []genParam{{"destination", "where to copy to"}}},
		{"upload", "Upload a file to %[1]s", "Uploads a local file into %[1]s of %[3]s.", []genParam{{"file", "the local file"}, {"key", "the key (path) to store it under"}}},
		{"download", "Download a file from %[1]s", "Downloads a file stored in %[1]s of %[3]s.", []genParam{{"key", "the key (path) of the file"}}},
		{"policy-get", "Get the access policy of %[1]s", "Returns the access policy (permissions) of %[1]s of %[3]s.", nil},
		{"policy-set", "Set the access policy of %[1]s", "Replaces the access policy (permissions) of %[1]s of %[3]s.", []genParam{{"policy", "the policy document (JSON)"}}},
		{"versioning-enable", "Enable versioning on %[1]s", "Turns on object versioning for %[1]s of %[3]s, so overwritten files are kept.", nil},
		{"lifecycle-set", "Set the lifecycle rules of %[1]s", "Sets when files in %[1]s of %[3]s expire or move to colder storage.", []genParam{{"expire-days", "delete files older than this many days"}}},
		{"presign-url", "Make a pre-signed URL for %[1]s", "Returns a temporary pre-signed URL that shares a file in %[1]s of %[3]s without credentials.", []genParam{{"key", "the key (path) of the file"}, {"expires-in", "how long the link is valid, such as 1h"}}},
		{"usage-get", "Get the storage usage of %[1]s", "Returns how many bytes and files %[1]s of %[3]s holds.", nil},
	},
	"credential": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s (never their secret values).", []genParam{{"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s: its scopes, creation and expiry dates, last use.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s and returns its secret value once.", []genParam{{"name", "a name for the new %[2]s"}, {"scopes", "the permissions it grants"}, {"expires-in-days", "days until it expires"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s; whatever uses it stops working.", nil},
		{"rotate", "Rotate %[1]s", "Rotates %[1]s of %[3]s: issues a new secret value and retires the old one after a grace period.", []genParam{{"grace-hours", "hours the old value keeps working"}}},
		{"revoke", "Revoke %[1]s", "Revokes %[1]s of %[3]s at once (it can no longer be used).", []genParam{{"reason", "why, kept in the audit log"}}},
		{"enable", "Enable %[1]s", "Enables a disabled %[2]s of %[3]s.", nil},
		{"disable", "Disable %[1]s", "Disables %[1]s of %[3]s without deleting it.", nil},
		{"scopes-set", "Set the scopes of %[1]s", "Replaces the scopes (permissions) %[1]s of %[3]s grants.", []genParam{{"scopes", "the permissions it grants"}}},
		{"usage-get", "Get the usage of %[1]s", "Returns when and from where %[1]s of %[3]s was last used.", nil},
		{"expiry-set", "Set the expiry of %[1]s", "Changes when %[1]s of %[3]s expires.", []genParam{{"expires-in-days", "days until it expires"}}},
	},
	"workitem": {
		{"list", "List %[4]s", "Lists %[4]s of %[3]s, newest first, filtered by state, label or assignee.", []genParam{{"state", "open, closed or all"}, {"label", "only with this label"}, {"assignee", "only assigned to this user"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s with its description and status.", nil},
		{"create", "Create %[1]s", "Opens (files) a new %[2]s in %[3]s.", []genParam{{"title", "the %[2]s's title"}, {"body", "the description, in Markdown"}, {"labels", "labels to set"}}},
		{"update", "Update %[1]s", "Edits the title, description or fields of %[1]s of %[3]s.", []genParam{{"title", "the new title"}, {"body", "the new description"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s for good.", nil},
		{"close", "Close %[1]s", "Closes %[1]s of %[3]s (done or won't do).", []genParam{{"reason", "completed or not planned"}}},
		{"reopen", "Reopen %[1]s", "Reopens a closed %[2]s of %[3]s.", nil},
		{"assign", "Assign %[1]s", "Assigns %[1]s of %[3]s to a user.", []genParam{{"assignee", "the user to assign"}}},
		{"comment-add", "Comment on %[1]s", "Adds a comment to %[1]s of %[3]s.", []genParam{{"body", "the comment, in Markdown"}}},
		{"comment-list", "List the comments on %[1]s", "Lists the comments of %[1]s of %[3]s, oldest first.", nil},
		{"label-add", "Add a label to %[1]s", "Adds a label to %[1]s of %[3]s.", []genParam{{"label", "the label"}}},
		{"label-remove", "Remove a label from %[1]s", "Removes a label from %[1]s of %[3]s.", []genParam{{"label", "the label"}}},
		{"search", "Search %[4]s", "Searches %[4]s of %[3]s by text in their title and description.", []genParam{{"text", "the words to look for"}}},
		{"watch", "Watch %[1]s", "Subscribes you to notifications about %[1]s of %[3]s.", nil},
		{"transition", "Move %[1]s to another status", "Moves %[1]s of %[3]s through its workflow, such as to In Progress or Done.", []genParam{{"status", "the target status"}}},
	},
	"people": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s.", []genParam{{"query", "only those whose name or email matches"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s: name, email, roles and status.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"email", "the email address"}, {"name", "the display name"}}},
		{"update", "Update %[1]s", "Changes the name, email or profile of %[1]s of %[3]s.", []genParam{{"name", "the new display name"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s and revokes its access.", nil},
		{"invite", "Invite %[1]s", "Sends an invitation email to join %[3]s as %[1]s.", []genParam{{"email", "the email address to invite"}, {"role", "the role to grant"}}},
		{"suspend", "Suspend %[1]s", "Suspends (deactivates) %[1]s of %[3]s; they can no longer sign in.", nil},
		{"unsuspend", "Unsuspend %[1]s", "Reactivates a suspended %[2]s of %[3]s.", nil},
		{"role-assign", "Assign a role to %[1]s", "Grants a role (permission set) to %[1]s of %[3]s.", []genParam{{"role", "the role to grant"}}},
		{"role-remove", "Remove a role from %[1]s", "Takes a role away from %[1]s of %[3]s.", []genParam{{"role", "the role to remove"}}},
		{"password-reset", "Reset the password of %[1]s", "Sends %[1]s of %[3]s a password reset link.", nil},
		{"mfa-reset", "Reset the MFA of %[1]s", "Removes the two-factor (MFA) devices of %[1]s of %[3]s so they can enrol again.", nil},
		{"sessions-revoke", "Sign out %[1]s everywhere", "Revokes every session of %[1]s of %[3]s (signs them out of all devices).", nil},
	},
	"data": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s with their engine, size and status.", nil},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s: engine, version, size, endpoint and status.", nil},
		{"create", "Create %[1]s", "Creates (provisions) a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}, {"size", "the instance class or tier"}, {"version", "the engine version"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s and its data (a final backup first unless skipped).", []genParam{{"skip-final-backup", "do not take a last backup"}}},
		{"update", "Update %[1]s", "Changes the settings of %[1]s of %[3]s.", nil},
		{"backup", "Back up %[1]s", "Takes a backup (snapshot) of %[1]s of %[3]s now.", []genParam{{"label", "a name for the backup"}}},
		{"restore", "Restore %[1]s from a backup", "Restores %[1]s of %[3]s from a backup or a point in time.", []genParam{{"backup-id", "the backup's id"}, {"point-in-time", "restore to this time instead"}}},
		{"scale", "Scale %[1]s", "Changes the capacity (size, replicas or shards) of %[1]s of %[3]s.", []genParam{{"replicas", "the number of replicas"}}},
		{"failover", "Fail over %[1]s", "Promotes a replica of %[1]s of %[3]s to primary.", nil},
		{"query", "Run a query on %[1]s", "Runs a read-only query on %[1]s of %[3]s and returns the rows.", []genParam{{"sql", "the query text"}}},
		{"metrics-get", "Get the metrics of %[1]s", "Returns CPU, memory, connections and latency of %[1]s of %[3]s.", []genParam{{"since", "the start of the range, such as 1h"}}},
		{"maintenance-set", "Set the maintenance window of %[1]s", "Sets when %[1]s of %[3]s may be patched and restarted.", []genParam{{"window", "such as sun:03:00-sun:04:00"}}},
	},
	"messaging": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s.", []genParam{{"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s.", nil},
		{"send", "Send %[1]s", "Sends (posts) %[1]s with %[3]s.", []genParam{{"to", "the recipient or channel"}, {"text", "the text to send"}}},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s.", nil},
		{"update", "Update %[1]s", "Edits %[1]s of %[3]s.", []genParam{{"text", "the new text"}}},
		{"archive", "Archive %[1]s", "Archives %[1]s of %[3]s (read-only, hidden from lists).", nil},
		{"pin", "Pin %[1]s", "Pins %[1]s of %[3]s so everyone sees it first.", nil},
		{"schedule", "Schedule %[1]s", "Schedules %[1]s of %[3]s to be sent later.", []genParam{{"at", "when to send it"}}},
		{"history-get", "Get the history of %[1]s", "Returns the recent history (delivery log) of %[1]s of %[3]s.", []genParam{{"since", "only since this time"}}},
		{"members-add", "Add members to %[1]s", "Adds people (members) to %[1]s of %[3]s.", []genParam{{"users", "the users to add"}}},
	},
	"billing": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s, newest first.", []genParam{{"customer", "only of this customer"}, {"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s with its amount, currency and status.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"amount", "the amount in the smallest currency unit"}, {"currency", "the currency, such as usd"}}},
		{"update", "Update %[1]s", "Changes the metadata or details of %[1]s of %[3]s.", nil},
		{"cancel", "Cancel %[1]s", "Cancels %[1]s of %[3]s.", []genParam{{"at-period-end", "cancel when the current period ends"}}},
		{"refund", "Refund %[1]s", "Refunds %[1]s of %[3]s, in full or in part.", []genParam{{"amount", "the amount to refund (default: all)"}}},
		{"finalize", "Finalize %[1]s", "Finalizes a draft %[2]s of %[3]s so it can be paid.", nil},
		{"void", "Void %[1]s", "Voids %[1]s of %[3]s (it will not be collected).", nil},
		{"email-send", "Email %[1]s", "Emails %[1]s of %[3]s to the customer.", nil},
		{"pdf-download", "Download %[1]s as PDF", "Returns %[1]s of %[3]s as a PDF document.", nil},
		{"retry", "Retry %[1]s", "Retries collecting a failed %[2]s of %[3]s.", nil},
	},
	"network": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s.", []genParam{{"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s with its settings.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}}},
		{"update", "Update %[1]s", "Changes the settings of %[1]s of %[3]s.", nil},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s.", nil},
		{"attach", "Attach %[1]s", "Attaches %[1]s of %[3]s to an instance or network.", []genParam{{"target", "what to attach it to"}}},
		{"detach", "Detach %[1]s", "Detaches %[1]s of %[3]s from what it is attached to.", nil},
		{"rule-add", "Add a rule to %[1]s", "Adds a rule (allow or deny, port, source) to %[1]s of %[3]s.", []genParam{{"port", "the port or range"}, {"source", "the source address range (CIDR)"}}},
		{"rule-remove", "Remove a rule from %[1]s", "Removes a rule from %[1]s of %[3]s.", []genParam{{"rule-id", "the rule's id"}}},
		{"cache-purge", "Purge the cache of %[1]s", "Purges (clears) the cached content of %[1]s of %[3]s.", []genParam{{"urls", "only these URLs (default: everything)"}}},
		{"verify", "Verify %[1]s", "Checks that %[1]s of %[3]s resolves and is configured correctly.", nil},
	},
	"observability": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s.", []genParam{{"tag", "only with this tag"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s with its definition and state.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}, {"query", "the query it watches"}}},
		{"update", "Update %[1]s", "Changes the definition of %[1]s of %[3]s.", nil},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s.", nil},
		{"mute", "Mute %[1]s", "Mutes (silences) %[1]s of %[3]s for a while, so it sends no notifications.", []genParam{{"duration", "how long, such as 2h"}}},
		{"unmute", "Unmute %[1]s", "Unmutes %[1]s of %[3]s.", nil},
		{"acknowledge", "Acknowledge %[1]s", "Acknowledges %[1]s of %[3]s (someone is on it).", nil},
		{"resolve", "Resolve %[1]s", "Marks %[1]s of %[3]s as resolved.", []genParam{{"note", "a resolution note"}}},
		{"query", "Query %[4]s", "Runs a query over %[4]s of %[3]s for a time range.", []genParam{{"query", "the query"}, {"since", "the start of the range, such as 1h"}}},
		{"export", "Export %[1]s", "Exports %[1]s of %[3]s as JSON.", nil},
	},
	"workload": {
		{"list", "List %[4]s", "Lists the %[4]s in a namespace of %[3]s.", []genParam{{"selector", "a label selector, such as app=web"}, {"all-namespaces", "list across all namespaces"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s as YAML.", nil},
		{"describe", "Describe %[1]s", "Shows the details and recent events of %[1]s of %[3]s.", nil},
		{"apply", "Apply %[1]s", "Creates or updates %[1]s of %[3]s from a manifest.", []genParam{{"manifest", "the YAML manifest"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s.", []genParam{{"grace-period", "seconds to wait before killing"}}},
		{"logs", "Get the logs of %[1]s", "Returns the container logs of %[1]s of %[3]s.", []genParam{{"container", "the container (default: the first)"}, {"tail", "only the last lines"}, {"follow", "keep streaming"}}},
		{"exec", "Run a command in %[1]s", "Runs a command inside a container of %[1]s of %[3]s.", []genParam{{"command", "the command and its arguments"}}},
		{"scale", "Scale %[1]s", "Sets the number of replicas of %[1]s of %[3]s.", []genParam{{"replicas", "the number of replicas"}}},
		{"restart", "Restart %[1]s", "Restarts %[1]s of %[3]s with a rolling restart.", nil},
		{"rollout-status", "Show the rollout status of %[1]s", "Shows the progress of the latest rollout of %[1]s of %[3]s.", nil},
		{"rollout-undo", "Roll back %[1]s", "Rolls back (undoes) the latest rollout of %[1]s of %[3]s.", []genParam{{"to-revision", "roll back to this revision"}}},
		{"label", "Label %[1]s", "Adds or changes a label of %[1]s of %[3]s.", []genParam{{"label", "the label, as key=value"}}},
		{"port-forward", "Forward a port to %[1]s", "Forwards a local port to a port of %[1]s of %[3]s.", []genParam{{"ports", "local:remote ports"}}},
	},
	"code": {
		{"list", "List %[4]s", "Lists the %[4]s of %[3]s.", []genParam{{"limit", "at most this many"}}},
		{"get", "Get %[1]s", "Shows one %[2]s of %[3]s.", nil},
		{"create", "Create %[1]s", "Creates a new %[2]s in %[3]s.", []genParam{{"name", "the new %[2]s's name"}}},
		{"delete", "Delete %[1]s", "Deletes %[1]s of %[3]s.", nil},
		{"update", "Update %[1]s", "Changes the settings of %[1]s of %[3]s.", nil},
		{"archive", "Archive %[1]s", "Archives %[1]s of %[3]s (read-only).", nil},
		{"protect", "Protect %[1]s", "Adds protection rules (required reviews, status checks) to %[1]s of %[3]s.", []genParam{{"required-reviews", "how many approving reviews"}}},
		{"run", "Run %[1]s", "Triggers (dispatches) a run of %[1]s of %[3]s.", []genParam{{"ref", "the branch or tag to run on"}, {"inputs", "the inputs, as key=value"}}},
		{"cancel", "Cancel %[1]s", "Cancels a running %[2]s of %[3]s.", nil},
		{"download", "Download %[1]s", "Downloads the files (artifacts, archive) of %[1]s of %[3]s.", nil},
		{"compare", "Compare %[4]s", "Compares two %[4]s of %[3]s and lists the commits and files that differ.", []genParam{{"base", "the base"}, {"head", "the head"}}},
		{"merge", "Merge %[1]s", "Merges %[1]s of %[3]s into its base.", []genParam{{"method", "merge, squash or rebase"}}},
	},
}

// genCommon are verbs every resource has (after its kind's, unless the
// kind has a verb of the same id).
var genCommon = []genVerb{
	{"rename", "Rename %[1]s", "Gives %[1]s of %[3]s a new name.", []genParam{{"new-name", "the new name"}}},
	{"clone", "Clone %[1]s", "Makes a copy of %[1]s of %[3]s under a new name.", []genParam{{"new-name", "the copy's name"}}},
	{"export", "Export %[4]s", "Exports %[4]s of %[3]s as JSON or CSV.", []genParam{{"format", "json or csv"}}},
	{"import", "Import %[4]s", "Imports %[4]s into %[3]s from a JSON or CSV file.", []genParam{{"file", "the file to import"}}},
	{"count", "Count %[4]s", "Returns how many %[4]s %[3]s has.", nil},
	{"events-list", "List the events of %[1]s", "Lists the audit events (who changed what, and when) of %[1]s of %[3]s.", []genParam{{"since", "only since this time"}}},
	{"permissions-get", "Get who can access %[1]s", "Lists the permissions (who can read, change or delete) on %[1]s of %[3]s.", nil},
	{"permissions-set", "Grant access to %[1]s", "Grants a user or group a permission on %[1]s of %[3]s.", []genParam{{"principal", "the user or group"}, {"permission", "read, write or admin"}}},
	{"owner-set", "Change the owner of %[1]s", "Transfers the ownership of %[1]s of %[3]s to another user or team.", []genParam{{"owner", "the new owner"}}},
	{"lock", "Lock %[1]s", "Locks %[1]s of %[3]s against changes and deletion.", []genParam{{"reason", "why, shown to others"}}},
	{"unlock", "Unlock %[1]s", "Removes the lock on %[1]s of %[3]s.", nil},
	{"annotate", "Annotate %[1]s", "Sets an annotation (a free-form note) on %[1]s of %[3]s.", []genParam{{"note", "the annotation text"}}},
	{"quota-get", "Get the quota for %[4]s", "Returns the limit and the current use of %[4]s in %[3]s.", nil},
	{"batch-delete", "Delete many %[4]s", "Deletes several %[4]s of %[3]s in one call.", []genParam{{"ids", "the ids to delete"}}},
	{"schema-get", "Get the schema of %[4]s", "Returns the fields and types (JSON schema) of %[4]s in %[3]s.", nil},
	{"subscribe", "Subscribe to changes of %[1]s", "Calls a webhook URL whenever %[1]s of %[3]s changes.", []genParam{{"url", "the webhook URL"}}},
	{"versions-list", "List the versions of %[1]s", "Lists the earlier versions (revisions) of %[1]s of %[3]s.", nil},
	{"validate", "Validate %[1]s", "Checks the configuration of %[1]s of %[3]s without changing anything.", nil},
	{"cost-get", "Get the cost of %[1]s", "Returns what %[1]s of %[3]s cost over the last billing period.", nil},
}

// genServices: the catalogue's services in order. Commands are generated
// service by service, resource by resource, verb by verb, and the first
// genSize are kept (the last service is cut).
var genServices = []genService{
	{[]string{"aws", "ec2"}, "AWS EC2", []genParam{pRegion}, []genResource{
		{"instances", "EC2 instance", "machine"}, {"volumes", "EBS volume", "storage"}, {"security-groups", "security group", "network"},
		{"key-pairs", "key pair", "credential"}, {"elastic-ips", "elastic IP address", "network"}, {"vpcs", "VPC", "network"}, {"subnets", "subnet", "network"}}},
	{[]string{"aws", "s3"}, "AWS S3", []genParam{pRegion}, []genResource{{"buckets", "S3 bucket", "storage"}, {"objects", "S3 object", "storage"}}},
	{[]string{"aws", "iam"}, "AWS IAM", nil, []genResource{{"users", "IAM user", "people"}, {"roles", "IAM role", "people"}, {"groups", "IAM group", "people"},
		{"access-keys", "access key", "credential"}, {"policies", "IAM policy", "network"}}},
	{[]string{"aws", "lambda"}, "AWS Lambda", []genParam{pRegion}, []genResource{{"functions", "Lambda function", "machine"}, {"layers", "Lambda layer", "code"}}},
	{[]string{"aws", "rds"}, "AWS RDS", []genParam{pRegion}, []genResource{{"databases", "RDS database", "data"}, {"snapshots", "database snapshot", "storage"}, {"clusters", "Aurora cluster", "data"}}},
	{[]string{"aws", "route53"}, "AWS Route 53", nil, []genResource{{"hosted-zones", "hosted zone", "network"}, {"records", "DNS record", "network"}, {"health-checks", "health check", "observability"}}},
	{[]string{"aws", "cloudwatch"}, "AWS CloudWatch", []genParam{pRegion}, []genResource{{"alarms", "CloudWatch alarm", "observability"}, {"dashboards", "CloudWatch dashboard", "observability"}, {"log-groups", "log group", "storage"}}},
	{[]string{"aws", "sqs"}, "AWS SQS", []genParam{pRegion}, []genResource{{"queues", "SQS queue", "messaging"}}},
	{[]string{"aws", "secretsmanager"}, "AWS Secrets Manager", []genParam{pRegion}, []genResource{{"secrets", "secret", "credential"}}},
	{[]string{"gcp", "compute"}, "Google Compute Engine", []genParam{pProject, pZone}, []genResource{{"instances", "VM instance", "machine"}, {"disks", "persistent disk", "storage"}, {"firewall-rules", "firewall rule", "network"}}},
	{[]string{"gcp", "storage"}, "Google Cloud Storage", []genParam{pProject}, []genResource{{"buckets", "Cloud Storage bucket", "storage"}}},
	{[]string{"gcp", "sql"}, "Google Cloud SQL", []genParam{pProject}, []genResource{{"instances", "Cloud SQL instance", "data"}}},
	{[]string{"gcp", "iam"}, "Google Cloud IAM", []genParam{pProject}, []genResource{{"service-accounts", "service account", "people"}, {"service-account-keys", "service account key", "credential"}}},
	{[]string{"gcp", "pubsub"}, "Google Pub/Sub", []genParam{pProject}, []genResource{{"topics", "Pub/Sub topic", "messaging"}, {"subscriptions", "Pub/Sub subscription", "messaging"}}},
	{[]string{"azure", "vm"}, "Azure Virtual Machines", []genParam{pSubscr, pGroup}, []genResource{{"machines", "Azure virtual machine", "machine"}, {"disks", "managed disk", "storage"}, {"scale-sets", "VM scale set", "machine"}}},
	{[]string{"azure", "storage"}, "Azure Storage", []genParam{pSubscr, pGroup}, []genResource{{"accounts", "storage account", "storage"}, {"containers", "blob container", "storage"}}},
	{[]string{"azure", "keyvault"}, "Azure Key Vault", []genParam{pSubscr}, []genResource{{"secrets", "Key Vault secret", "credential"}, {"keys", "Key Vault key", "credential"}, {"certificates", "Key Vault certificate", "credential"}}},
	{[]string{"azure", "ad"}, "Microsoft Entra ID", nil, []genResource{{"users", "Entra user", "people"}, {"groups", "Entra group", "people"}, {"app-registrations", "app registration", "people"}}},
	{[]string{"k8s"}, "Kubernetes", []genParam{pNamespace, pContext}, []genResource{{"pods", "pod", "workload"}, {"deployments", "deployment", "workload"},
		{"statefulsets", "stateful set", "workload"}, {"daemonsets", "daemon set", "workload"}, {"jobs", "job", "workload"}, {"cronjobs", "cron job", "workload"},
		{"services", "service", "network"}, {"ingresses", "ingress", "network"}, {"configmaps", "config map", "storage"}, {"secrets", "Kubernetes secret", "credential"},
		{"namespaces", "namespace", "network"}, {"nodes", "node", "machine"}, {"persistent-volumes", "persistent volume", "storage"}, {"service-accounts", "Kubernetes service account", "people"}}},
	{[]string{"helm"}, "Helm", []genParam{pNamespace}, []genResource{{"releases", "Helm release", "workload"}, {"repositories", "chart repository", "code"}}},
	{[]string{"docker"}, "Docker", []genParam{pHost}, []genResource{{"containers", "Docker container", "machine"}, {"images", "Docker image", "storage"}, {"volumes", "Docker volume", "storage"}, {"networks", "Docker network", "network"}}},
	{[]string{"github"}, "GitHub", []genParam{pRepo}, []genResource{{"issues", "GitHub issue", "workitem"}, {"pull-requests", "pull request", "workitem"},
		{"repos", "GitHub repository", "code"}, {"branches", "branch", "code"}, {"releases", "GitHub release", "code"}, {"workflows", "GitHub Actions workflow", "code"},
		{"gists", "gist", "storage"}, {"teams", "GitHub team", "people"}, {"members", "organisation member", "people"}, {"deploy-keys", "deploy key", "credential"},
		{"tokens", "personal access token", "credential"}, {"webhooks", "repository webhook", "messaging"}, {"discussions", "GitHub discussion", "workitem"}}},
	{[]string{"gitlab"}, "GitLab", []genParam{pInstance}, []genResource{{"issues", "GitLab issue", "workitem"}, {"merge-requests", "merge request", "workitem"},
		{"projects", "GitLab project", "code"}, {"pipelines", "CI pipeline", "code"}, {"runners", "CI runner", "machine"}, {"access-tokens", "project access token", "credential"}}},
	{[]string{"jira"}, "Jira", []genParam{pSite, pProjectK}, []genResource{{"issues", "Jira issue", "workitem"}, {"epics", "epic", "workitem"}, {"sprints", "sprint", "workitem"}, {"users", "Jira user", "people"}}},
	{[]string{"linear"}, "Linear", []genParam{pWorkspace}, []genResource{{"issues", "Linear issue", "workitem"}, {"projects", "Linear project", "workitem"}, {"cycles", "cycle", "workitem"}}},
	{[]string{"slack"}, "Slack", []genParam{pWorkspace}, []genResource{{"channels", "Slack channel", "messaging"}, {"messages", "Slack message", "messaging"},
		{"users", "Slack user", "people"}, {"user-groups", "user group", "people"}, {"reminders", "reminder", "messaging"}, {"bot-tokens", "bot token", "credential"}}},
	{[]string{"stripe"}, "Stripe", []genParam{pAccount}, []genResource{{"customers", "Stripe customer", "people"}, {"invoices", "invoice", "billing"},
		{"subscriptions", "subscription", "billing"}, {"payment-intents", "payment", "billing"}, {"charges", "charge", "billing"}, {"refunds", "refund", "billing"},
		{"api-keys", "Stripe API key", "credential"}, {"webhook-endpoints", "webhook endpoint", "messaging"}, {"payouts", "payout", "billing"}}},
	{[]string{"twilio"}, "Twilio", []genParam{pAccount}, []genResource{{"sms", "SMS message", "messaging"}, {"calls", "phone call", "messaging"}, {"phone-numbers", "phone number", "network"}, {"api-keys", "Twilio API key", "credential"}}},
	{[]string{"sendgrid"}, "SendGrid", nil, []genResource{{"emails", "email", "messaging"}, {"templates", "email template", "storage"}, {"api-keys", "SendGrid API key", "credential"}}},
	{[]string{"datadog"}, "Datadog", []genParam{pSite}, []genResource{{"monitors", "Datadog monitor", "observability"}, {"dashboards", "Datadog dashboard", "observability"},
		{"logs", "log", "observability"}, {"metrics", "metric", "observability"}, {"slos", "service level objective", "observability"}, {"api-keys", "Datadog API key", "credential"}, {"hosts", "monitored host", "machine"}}},
	{[]string{"pagerduty"}, "PagerDuty", nil, []genResource{{"incidents", "incident", "workitem"}, {"alerts", "PagerDuty alert", "observability"}, {"schedules", "on-call schedule", "people"}, {"services", "PagerDuty service", "observability"}}},
	{[]string{"grafana"}, "Grafana", []genParam{pInstance}, []genResource{{"dashboards", "Grafana dashboard", "observability"}, {"alerts", "Grafana alert rule", "observability"}, {"data-sources", "data source", "network"}}},
	{[]string{"cloudflare"}, "Cloudflare", []genParam{pAccount}, []genResource{{"zones", "Cloudflare zone", "network"}, {"dns-records", "DNS record", "network"},
		{"workers", "Cloudflare Worker", "machine"}, {"certificates", "TLS certificate", "credential"}, {"firewall-rules", "WAF rule", "network"}, {"api-tokens", "Cloudflare API token", "credential"}}},
	{[]string{"vault"}, "HashiCorp Vault", []genParam{pMount}, []genResource{{"secrets", "Vault secret", "credential"}, {"policies", "Vault policy", "network"}, {"tokens", "Vault token", "credential"}}},
	{[]string{"okta"}, "Okta", []genParam{pSite}, []genResource{{"users", "Okta user", "people"}, {"groups", "Okta group", "people"}, {"apps", "Okta application", "people"}, {"api-tokens", "Okta API token", "credential"}}},
	{[]string{"postgres"}, "PostgreSQL", []genParam{pHost, pDatabase}, []genResource{{"databases", "Postgres database", "data"}, {"roles", "Postgres role", "people"}, {"tables", "table", "data"}, {"replicas", "read replica", "data"}}},
	{[]string{"redis"}, "Redis", []genParam{pHost}, []genResource{{"caches", "Redis cache", "data"}, {"keys", "Redis key", "storage"}}},
	{[]string{"elastic"}, "Elasticsearch", []genParam{pHost}, []genResource{{"indices", "Elasticsearch index", "data"}, {"snapshots", "Elasticsearch snapshot", "storage"}, {"api-keys", "Elasticsearch API key", "credential"}}},
	{[]string{"kafka"}, "Apache Kafka", []genParam{pEnv}, []genResource{{"topics", "Kafka topic", "messaging"}, {"consumer-groups", "consumer group", "data"}, {"clusters", "Kafka cluster", "data"}}},
	{[]string{"zendesk"}, "Zendesk", []genParam{pSite}, []genResource{{"tickets", "support ticket", "workitem"}, {"users", "Zendesk user", "people"}, {"macros", "macro", "storage"}}},
	{[]string{"salesforce"}, "Salesforce", []genParam{pInstance}, []genResource{{"accounts", "Salesforce account", "people"}, {"opportunities", "opportunity", "workitem"}, {"leads", "lead", "people"}, {"cases", "support case", "workitem"}, {"contacts", "contact", "people"}}},
	{[]string{"hubspot"}, "HubSpot", nil, []genResource{{"contacts", "HubSpot contact", "people"}, {"deals", "deal", "workitem"}, {"companies", "company", "people"}}},
	{[]string{"notion"}, "Notion", []genParam{pWorkspace}, []genResource{{"pages", "Notion page", "storage"}, {"databases", "Notion database", "data"}, {"comments", "Notion comment", "messaging"}}},
	{[]string{"confluence"}, "Confluence", []genParam{pSite}, []genResource{{"pages", "Confluence page", "storage"}, {"spaces", "Confluence space", "storage"}}},
	{[]string{"digitalocean"}, "DigitalOcean", nil, []genResource{{"droplets", "droplet", "machine"}, {"volumes", "block storage volume", "storage"}, {"databases", "managed database", "data"}, {"domains", "domain", "network"}}},
	{[]string{"heroku"}, "Heroku", nil, []genResource{{"apps", "Heroku app", "machine"}, {"dynos", "dyno", "machine"}, {"addons", "add-on", "data"}, {"config-vars", "config var", "credential"}}},
	{[]string{"vercel"}, "Vercel", []genParam{pProject}, []genResource{{"deployments", "Vercel deployment", "code"}, {"domains", "Vercel domain", "network"}, {"env-vars", "environment variable", "credential"}}},
	{[]string{"terraform"}, "Terraform Cloud", []genParam{pOrg, pWorkspace}, []genResource{{"workspaces", "Terraform workspace", "code"}, {"runs", "Terraform run", "code"}, {"variables", "workspace variable", "credential"}, {"state-versions", "state version", "storage"}}},
	{[]string{"sentry"}, "Sentry", []genParam{pOrg}, []genResource{{"issues", "Sentry issue", "workitem"}, {"projects", "Sentry project", "code"}, {"releases", "Sentry release", "code"}, {"alerts", "Sentry alert rule", "observability"}}},
	{[]string{"gcp", "gke"}, "Google Kubernetes Engine", []genParam{pProject, pZone}, []genResource{{"clusters", "GKE cluster", "data"}, {"node-pools", "node pool", "machine"}}},
	{[]string{"aws", "eks"}, "AWS EKS", []genParam{pRegion}, []genResource{{"clusters", "EKS cluster", "data"}, {"node-groups", "node group", "machine"}}},
	{[]string{"aws", "dynamodb"}, "AWS DynamoDB", []genParam{pRegion}, []genResource{{"tables", "DynamoDB table", "data"}, {"backups", "DynamoDB backup", "storage"}}},
	{[]string{"aws", "sns"}, "AWS SNS", []genParam{pRegion}, []genResource{{"topics", "SNS topic", "messaging"}, {"subscriptions", "SNS subscription", "messaging"}}},
	{[]string{"aws", "ecr"}, "AWS ECR", []genParam{pRegion}, []genResource{{"repositories", "container registry repository", "code"}, {"images", "container image", "storage"}}},
	{[]string{"aws", "kms"}, "AWS KMS", []genParam{pRegion}, []genResource{{"keys", "KMS key", "credential"}, {"aliases", "KMS alias", "network"}}},
	{[]string{"aws", "cloudfront"}, "AWS CloudFront", nil, []genResource{{"distributions", "CloudFront distribution", "network"}, {"invalidations", "cache invalidation", "network"}}},
	{[]string{"azure", "aks"}, "Azure Kubernetes Service", []genParam{pSubscr, pGroup}, []genResource{{"clusters", "AKS cluster", "data"}, {"node-pools", "AKS node pool", "machine"}}},
	{[]string{"azure", "sql"}, "Azure SQL", []genParam{pSubscr, pGroup}, []genResource{{"databases", "Azure SQL database", "data"}, {"servers", "Azure SQL server", "data"}}},
	{[]string{"azure", "monitor"}, "Azure Monitor", []genParam{pSubscr}, []genResource{{"alerts", "Azure alert rule", "observability"}, {"action-groups", "action group", "messaging"}, {"workbooks", "workbook", "observability"}}},
	{[]string{"mongodb"}, "MongoDB Atlas", []genParam{pProject}, []genResource{{"clusters", "Atlas cluster", "data"}, {"database-users", "database user", "people"}, {"collections", "collection", "data"}}},
	{[]string{"snowflake"}, "Snowflake", []genParam{pAccount}, []genResource{{"warehouses", "warehouse", "machine"}, {"databases", "Snowflake database", "data"}, {"users", "Snowflake user", "people"}, {"stages", "stage", "storage"}}},
	{[]string{"bigquery"}, "BigQuery", []genParam{pProject}, []genResource{{"datasets", "BigQuery dataset", "data"}, {"tables", "BigQuery table", "data"}, {"jobs", "query job", "code"}}},
	{[]string{"circleci"}, "CircleCI", []genParam{pOrg}, []genResource{{"pipelines", "CircleCI pipeline", "code"}, {"contexts", "context", "credential"}, {"projects", "CircleCI project", "code"}}},
	{[]string{"jenkins"}, "Jenkins", []genParam{pInstance}, []genResource{{"jobs", "Jenkins job", "code"}, {"builds", "Jenkins build", "code"}, {"nodes", "build agent", "machine"}, {"credentials", "Jenkins credential", "credential"}}},
	{[]string{"argocd"}, "Argo CD", []genParam{pInstance}, []genResource{{"applications", "Argo CD application", "workload"}, {"projects", "Argo CD project", "code"}, {"clusters", "managed cluster", "network"}}},
	{[]string{"auth0"}, "Auth0", []genParam{pSite}, []genResource{{"users", "Auth0 user", "people"}, {"clients", "application client", "credential"}, {"connections", "identity connection", "network"}, {"roles", "Auth0 role", "people"}}},
	{[]string{"shopify"}, "Shopify", []genParam{pSite}, []genResource{{"orders", "order", "billing"}, {"products", "product", "storage"}, {"customers", "Shopify customer", "people"}, {"discounts", "discount code", "billing"}}},
	{[]string{"intercom"}, "Intercom", nil, []genResource{{"conversations", "conversation", "workitem"}, {"contacts", "Intercom contact", "people"}, {"articles", "help article", "storage"}}},
	{[]string{"asana"}, "Asana", []genParam{pWorkspace}, []genResource{{"tasks", "Asana task", "workitem"}, {"projects", "Asana project", "workitem"}, {"teams", "Asana team", "people"}}},
	{[]string{"trello"}, "Trello", nil, []genResource{{"cards", "Trello card", "workitem"}, {"boards", "Trello board", "storage"}, {"lists", "Trello list", "storage"}}},
	{[]string{"figma"}, "Figma", nil, []genResource{{"files", "Figma file", "storage"}, {"comments", "Figma comment", "messaging"}, {"projects", "Figma project", "storage"}}},
	{[]string{"dropbox"}, "Dropbox", nil, []genResource{{"files", "Dropbox file", "storage"}, {"folders", "Dropbox folder", "storage"}, {"shared-links", "shared link", "credential"}}},
	{[]string{"gdrive"}, "Google Drive", nil, []genResource{{"files", "Drive file", "storage"}, {"folders", "Drive folder", "storage"}, {"permissions", "sharing permission", "people"}}},
	{[]string{"gmail"}, "Gmail", nil, []genResource{{"messages", "email message", "messaging"}, {"labels", "Gmail label", "storage"}, {"drafts", "draft", "messaging"}, {"filters", "mail filter", "network"}}},
	{[]string{"gcal"}, "Google Calendar", nil, []genResource{{"events", "calendar event", "workitem"}, {"calendars", "calendar", "storage"}}},
	{[]string{"zoom"}, "Zoom", nil, []genResource{{"meetings", "Zoom meeting", "workitem"}, {"recordings", "meeting recording", "storage"}, {"users", "Zoom user", "people"}, {"webinars", "webinar", "workitem"}}},
	{[]string{"teams"}, "Microsoft Teams", nil, []genResource{{"channels", "Teams channel", "messaging"}, {"messages", "Teams message", "messaging"}, {"meetings", "Teams meeting", "workitem"}}},
	{[]string{"discord"}, "Discord", nil, []genResource{{"channels", "Discord channel", "messaging"}, {"messages", "Discord message", "messaging"}, {"roles", "Discord role", "people"}}},
	{[]string{"openai"}, "OpenAI", nil, []genResource{{"api-keys", "OpenAI API key", "credential"}, {"files", "uploaded file", "storage"}, {"fine-tunes", "fine-tuning job", "code"}, {"batches", "batch job", "code"}}},
	{[]string{"npm"}, "npm", nil, []genResource{{"packages", "npm package", "code"}, {"tokens", "npm token", "credential"}, {"owners", "package owner", "people"}}},
	{[]string{"pypi"}, "PyPI", nil, []genResource{{"projects", "PyPI project", "code"}, {"tokens", "PyPI API token", "credential"}}},
	{[]string{"dockerhub"}, "Docker Hub", nil, []genResource{{"repositories", "Docker Hub repository", "code"}, {"tags", "image tag", "storage"}, {"access-tokens", "Docker Hub access token", "credential"}}},
	{[]string{"fastly"}, "Fastly", nil, []genResource{{"services", "Fastly service", "network"}, {"backends", "origin backend", "network"}, {"tokens", "Fastly API token", "credential"}}},
	{[]string{"netlify"}, "Netlify", nil, []genResource{{"sites", "Netlify site", "machine"}, {"deploys", "Netlify deploy", "code"}, {"forms", "form", "storage"}, {"env-vars", "Netlify environment variable", "credential"}}},
	{[]string{"supabase"}, "Supabase", []genParam{pProject}, []genResource{{"projects", "Supabase project", "data"}, {"functions", "edge function", "machine"}, {"buckets", "storage bucket", "storage"}, {"users", "auth user", "people"}}},
	{[]string{"fly"}, "Fly.io", nil, []genResource{{"apps", "Fly app", "machine"}, {"machines", "Fly Machine", "machine"}, {"volumes", "Fly volume", "storage"}, {"secrets", "Fly secret", "credential"}}},
	{[]string{"opsgenie"}, "Opsgenie", nil, []genResource{{"alerts", "Opsgenie alert", "observability"}, {"schedules", "Opsgenie schedule", "people"}, {"teams", "Opsgenie team", "people"}}},
	{[]string{"newrelic"}, "New Relic", []genParam{pAccount}, []genResource{{"alerts", "alert policy", "observability"}, {"dashboards", "New Relic dashboard", "observability"}, {"synthetics", "synthetic monitor", "observability"}, {"license-keys", "license key", "credential"}}},
	{[]string{"prometheus"}, "Prometheus", []genParam{pHost}, []genResource{{"rules", "recording rule", "observability"}, {"targets", "scrape target", "observability"}, {"silences", "Alertmanager silence", "observability"}}},
	{[]string{"airtable"}, "Airtable", nil, []genResource{{"bases", "Airtable base", "data"}, {"records", "Airtable record", "storage"}, {"tables", "Airtable table", "data"}}},
	{[]string{"box"}, "Box", nil, []genResource{{"files", "Box file", "storage"}, {"folders", "Box folder", "storage"}, {"collaborations", "collaboration", "people"}}},
	{[]string{"bitbucket"}, "Bitbucket", []genParam{pWorkspace}, []genResource{{"repos", "Bitbucket repository", "code"}, {"pull-requests", "Bitbucket pull request", "workitem"}, {"pipelines", "Bitbucket pipeline", "code"}, {"app-passwords", "app password", "credential"}}},
	{[]string{"mailchimp"}, "Mailchimp", nil, []genResource{{"campaigns", "email campaign", "messaging"}, {"audiences", "audience", "people"}, {"templates", "Mailchimp template", "storage"}}},
	{[]string{"quickbooks"}, "QuickBooks", []genParam{pAccount}, []genResource{{"invoices", "QuickBooks invoice", "billing"}, {"bills", "bill", "billing"}, {"customers", "QuickBooks customer", "people"}, {"payments", "QuickBooks payment", "billing"}}},
	{[]string{"workday"}, "Workday", nil, []genResource{{"workers", "employee", "people"}, {"time-off", "time-off request", "workitem"}, {"expenses", "expense report", "billing"}}},
	{[]string{"servicenow"}, "ServiceNow", []genParam{pInstance}, []genResource{{"incidents", "ServiceNow incident", "workitem"}, {"changes", "change request", "workitem"}, {"cmdb-items", "configuration item", "storage"}, {"users", "ServiceNow user", "people"}}},
}

// genSize is the number of commands of the generated catalogue.
const genSize = 10000

// genCatalogue returns the generated catalogue (genSize commands).
func genCatalogue() []genCommand {
	var out []genCommand
	for _, s := range genServices {
		for _, r := range s.resources {
			verbs, ok := genKinds[r.kind]
			if !ok {
				panic("generated catalogue: unknown kind " + r.kind)
			}
			seen := map[string]bool{}
			for _, v := range verbs {
				seen[v.id] = true
				out = append(out, genMake(s, r, v))
			}
			for _, v := range genCommon {
				if !seen[v.id] {
					out = append(out, genMake(s, r, v))
				}
			}
		}
	}
	if len(out) < genSize {
		panic(fmt.Sprintf("generated catalogue: only %d commands", len(out)))
	}
	return out[:genSize]
}

func genMake(s genService, r genResource, v genVerb) genCommand {
	path := append(append(append([]string{}, s.path...), r.id), v.id)
	plural := genPlural(r.noun)
	fill := func(t string) string {
		return fmt.Sprintf(t, genArticle(r.noun), r.noun, s.display, plural)
	}
	c := genCommand{
		Package:     "gen." + strings.Join(s.path, "-"),
		ID:          strings.Join(path, "."),
		Path:        path,
		Summary:     fill(v.summary),
		Description: fill(v.description),
	}
	c.Title = c.Summary
	c.Params = append(c.Params, s.params...)
	if v.id != "list" && v.id != "create" && v.id != "send" && v.id != "search" && v.id != "query" && v.id != "compare" &&
		v.id != "import" && v.id != "count" && v.id != "export" && v.id != "quota-get" && v.id != "batch-delete" && v.id != "schema-get" {
		idParam := genSingularID(r.id) + "-id"
		c.Params = append(c.Params, genParam{idParam, "the " + r.noun + "'s id (or name)"})
	}
	for _, p := range v.params {
		c.Params = append(c.Params, genParam{p.ID, fill(p.Description)})
	}
	return c
}

func genArticle(noun string) string {
	// Initialisms read with a vowel sound (an SMS, an S3 bucket, an RDS
	// database) take "an"; so do nouns starting with a vowel letter.
	if strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return "an " + noun
	}
	for _, p := range []string{"SMS", "S3", "SNS", "SQS", "RDS", "SSH", "MFA", "npm"} {
		if strings.HasPrefix(noun, p) {
			return "an " + noun
		}
	}
	return "a " + noun
}

func genPlural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "ss"), strings.HasSuffix(noun, "sh"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "x"):
		return noun + "es"
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") && !strings.HasSuffix(noun, "ey") && !strings.HasSuffix(noun, "oy"):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// genSingularID is the singular of a plural kebab id: instances →
// instance, policies → policy, indices → index.
func genSingularID(id string) string {
	switch {
	case id == "sms", id == "time-off", id == "logs", id == "metrics", id == "synthetics":
		return map[string]string{"sms": "message", "time-off": "request", "logs": "log", "metrics": "metric", "synthetics": "monitor"}[id]
	case strings.HasSuffix(id, "indices"):
		return strings.TrimSuffix(id, "ices") + "ex"
	case strings.HasSuffix(id, "ies"):
		return strings.TrimSuffix(id, "ies") + "y"
	case strings.HasSuffix(id, "sses"), strings.HasSuffix(id, "xes"), strings.HasSuffix(id, "ches"):
		return strings.TrimSuffix(id, "es")
	}
	return strings.TrimSuffix(id, "s")
}
