// Package journal keeps Mneme's records in Redis: the recall log, the policy
// decision log and the admin audit trail, each capped (the audit trail also
// by age) so that it never grows without bound, and readable by admins.
package journal
