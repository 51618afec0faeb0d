// Package journal keeps Mneme's short-lived records in Redis: the recall log
// and the policy decision log, each capped so that it never grows without
// bound, and readable by admins.
package journal
