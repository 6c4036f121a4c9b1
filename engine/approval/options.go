package approval

import "github.com/leashd/leashd/engine/agent"

// OptionMeaning says what an ACP option kind does, shown under its name.
var OptionMeaning = map[string]string{
	"allow_once":    "Allow this call",
	"allow_always":  "Allow, and do not ask again for calls like it",
	"reject_once":   "Reject; typed text is sent as the reason",
	"reject_always": "Reject, and reject calls like it from now on",
}

// PickOption is the agent's option for a decision nobody was asked about
// (an approval policy's): allow_once for an allow (never "always": the
// policy, not the agent, keeps deciding), else RejectOption.
func PickOption(opts []agent.PermissionOption, allowed bool) string {
	if !allowed {
		return RejectOption(opts)
	}
	for _, o := range opts {
		if o.Kind == "allow_once" {
			return o.ID
		}
	}
	return ""
}

// RejectOption is the option a rejection picks: the first reject_once,
// else the first reject_always, else none.
func RejectOption(opts []agent.PermissionOption) string {
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range opts {
			if o.Kind == kind {
				return o.ID
			}
		}
	}
	return ""
}
