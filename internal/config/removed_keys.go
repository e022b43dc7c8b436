package config

// removedKeys are keys sett.yml no longer has, by path, each with what
// replaced it. A file that still writes one fails with ErrUnknownKey and
// this message, rather than the bare "unknown key", so that whoever
// upgrades learns where the setting went.
var removedKeys = map[string]string{
	"orchestrator.disable_bid_grants": "was removed from sett.yml: it is a debugging switch, now the orchestrator " +
		"daemon's --disable-bid-grants flag (or SETT_DISABLE_BID_GRANTS=true in its environment); delete the key",
	"orchestrator.disable_result_completion": "was removed from sett.yml: it is a debugging switch, now the orchestrator " +
		"daemon's --disable-result-completion flag (or SETT_DISABLE_RESULT_COMPLETION=true in its environment); delete the key",
	"orchestrator.approval_timeout": "was renamed approvals.timeout (the approval gate's other settings live in approvals " +
		"too); move the value there",
}
