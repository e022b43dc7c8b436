package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
)

// decide records an approval decision through blackboard.DecideApproval,
// bound to the exact version the page showed. A refused decision (stale,
// superseded, already decided, expired) renders the inbox again with the
// reason and status 409.
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	d := blackboard.Decision{ArtefactID: r.PostFormValue("artefact"), Decision: blackboard.ApprovalDecision(r.PostFormValue("decision")),
		By: c.actor(r), Channel: blackboard.ChannelConsole, Reason: r.PostFormValue("reason")}
	err := c.wb.DecideApproval(r.Context(), d)
	if err == nil {
		http.Redirect(w, r, c.base+"/approvals", http.StatusSeeOther)
		return
	}
	if !blackboard.IsDecisionRefusal(err) {
		c.fail(w, r, err)
		return
	}
	v, verr := c.approvalsView(r)
	if verr != nil {
		c.fail(w, r, verr)
		return
	}
	v.Error = refusalText(d.ArtefactID, err)
	status := http.StatusConflict
	if errors.Is(err, blackboard.ErrInvalid) {
		status = http.StatusBadRequest
	}
	c.render(w, status, "approvals.html", v)
}

// refusalText says why a decision did not apply and what to do instead.
func refusalText(artefactID string, err error) string {
	var sup *blackboard.SupersededError
	switch {
	case errors.As(err, &sup):
		return fmt.Sprintf("Refused: %s is superseded — version %d (%s) is current; decide on that one.", blackboard.ShortID(artefactID), sup.CurrentVersion, blackboard.ShortID(sup.CurrentID))
	case errors.Is(err, blackboard.ErrAlreadyDecided):
		return fmt.Sprintf("Refused: %s was already decided; a decision cannot be changed.", blackboard.ShortID(artefactID))
	case errors.Is(err, blackboard.ErrApprovalExpired):
		return fmt.Sprintf("Refused: the approval of %s timed out before this decision.", blackboard.ShortID(artefactID))
	case errors.Is(err, blackboard.ErrWorkflowEnded):
		return fmt.Sprintf("Refused: the workflow of %s has ended (cancelled or finished); nothing waits for this decision any more.", blackboard.ShortID(artefactID))
	}
	return "Refused: " + err.Error()
}

func (c *Console) pause(w http.ResponseWriter, r *http.Request) {
	// The blackboard knows two control sources (cli, stop_file); the
	// console is a person's deliberate action like the CLI's.
	if _, err := c.wb.Pause(r.Context(), c.actor(r), strings.TrimSpace(r.PostFormValue("reason")), blackboard.ControlFromCLI); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, c.base+"/control", http.StatusSeeOther)
}

func (c *Console) resume(w http.ResponseWriter, r *http.Request) {
	if _, err := c.wb.Resume(r.Context(), c.actor(r), blackboard.ControlFromCLI); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, c.base+"/control", http.StatusSeeOther)
}

// cancel ends a workflow as cancelled, as `sett cancel` does.
func (c *Console) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := blackboard.ValidateID(id); err != nil {
		c.fail(w, r, err)
		return
	}
	why := "cancelled"
	if who := c.actor(r); who != "" {
		why += " by " + who
	}
	if reason := strings.TrimSpace(r.PostFormValue("reason")); reason != "" {
		why += ": " + reason
	}
	ended, err := c.wb.EndWorkflow(r.Context(), id, blackboard.WorkflowCancelled, why, blackboard.OperatorEpoch)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if !ended {
		c.fail(w, r, fmt.Errorf("%w: workflow %s already ended", blackboard.ErrInvalid, blackboard.ShortID(id)))
		return
	}
	http.Redirect(w, r, c.base+"/w/"+id, http.StatusSeeOther)
}

// retry re-runs a failed claim, as `sett retry` does.
func (c *Console) retry(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := c.wb.RetryClaim(r.Context(), id, c.actor(r))
	if errors.Is(err, blackboard.ErrNotFailed) || errors.Is(err, blackboard.ErrWorkflowEnded) {
		err = fmt.Errorf("%w: %v", blackboard.ErrInvalid, err)
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	_ = res
	cl, err := c.bb.GetClaim(r.Context(), id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, c.base+"/w/"+cl.WorkflowID, http.StatusSeeOther)
}
