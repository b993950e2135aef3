package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/earshot-app/earshot/api"
)

// UsageDays is how many days of usage a report covers by default.
const UsageDays = 30

// UsageReport is what a key has spent: its project, its balances and its
// usage day by day, from the service's management API.
type UsageReport struct {
	// Backend names who answered ("Local engine", "Hosted service").
	Backend string
	// Projects lists the projects the key can see; Project is the one
	// reported on.
	Projects []api.Project
	Project  api.Project
	// Balances are the project's prepaid balances; none for the local
	// engine, which charges nothing.
	Balances []api.Balance
	// Start and End are the days covered, YYYY-MM-DD, both included.
	Start, End string
	// Days has one row per day with usage, oldest first; Total sums them.
	Days  []UsageDay
	Total UsageDay
}

// UsageDay is one day's usage.
type UsageDay struct {
	Day string // YYYY-MM-DD
	// Requests counts requests and streams of every kind.
	Requests int
	// AudioHours is the audio transcribed (every channel counted once);
	// AgentHours the agent conversations.
	AudioHours, AgentHours float64
	// Characters is the text synthesised.
	Characters int
}

// ErrUsageUnavailable is returned when usage cannot be asked for with the
// connection in use: a regional backend, an access token instead of a
// key, or a key whose scope does not allow it. The error's text says
// which, in plain words.
var ErrUsageUnavailable = errors.New("usage is not available")

// usageError is an ErrUsageUnavailable with its reason.
type usageError struct{ reason string }

func (e *usageError) Error() string        { return e.reason }
func (e *usageError) Is(target error) bool { return target == ErrUsageUnavailable }

// Usage reports the project of the key in use and its usage over the
// last days days (UsageDays when days <= 0), from the management API. A
// projectID other than "" picks one of the key's projects.
func (w *Workspace) Usage(ctx context.Context, projectID string, days int) (UsageReport, error) {
	conn, err := w.Connection(ctx)
	if err != nil {
		return UsageReport{}, err
	}
	return projectUsage(ctx, conn.Client, conn.Name, projectID, days, time.Now())
}

// projectUsage does the work of Usage with client, now being the time
// that decides the window.
func projectUsage(ctx context.Context, c *api.Client, backend, projectID string, days int, now time.Time) (UsageReport, error) {
	if days <= 0 {
		days = UsageDays
	}
	r := UsageReport{
		Backend: backend,
		End:     now.UTC().Format(api.ManagementDate),
		Start:   now.UTC().AddDate(0, 0, 1-days).Format(api.ManagementDate),
	}
	list, err := c.Projects(ctx)
	if err != nil {
		return r, usageErr(err)
	}
	r.Projects = list.Projects
	if len(r.Projects) == 0 {
		return r, &usageError{"The key belongs to no project, so there is no usage to show."}
	}
	r.Project = r.Projects[0]
	if projectID != "" {
		i := slices.IndexFunc(r.Projects, func(p api.Project) bool { return p.ProjectID == projectID })
		if i < 0 {
			return r, fmt.Errorf("the key cannot see the project %q", projectID)
		}
		r.Project = r.Projects[i]
	}
	bal, err := c.ProjectBalances(ctx, r.Project.ProjectID)
	if err != nil {
		return r, usageErr(err)
	}
	r.Balances = bal.Balances
	b, err := c.ProjectUsageBreakdown(ctx, r.Project.ProjectID, api.UsageQuery{Start: r.Start, End: r.End, Grouping: []string{"endpoint"}})
	if err != nil {
		return r, usageErr(err)
	}
	r.Days, r.Total = usageByDay(b.Results)
	return r, nil
}

// usageByDay sums breakdown results into days, oldest first.
func usageByDay(results []api.UsageBreakdownResult) ([]UsageDay, UsageDay) {
	byDay := map[string]*UsageDay{}
	var order []string
	var total UsageDay
	for _, res := range results {
		day := res.Grouping.Start
		d := byDay[day]
		if d == nil {
			d = &UsageDay{Day: day}
			byDay[day] = d
			order = append(order, day)
		}
		for _, x := range []*UsageDay{d, &total} {
			x.Requests += res.Requests
			x.AudioHours += res.Hours
			x.AgentHours += res.AgentHours
			x.Characters += res.TTSCharacters
		}
	}
	slices.Sort(order)
	days := make([]UsageDay, 0, len(order))
	for _, day := range order {
		days = append(days, *byDay[day])
	}
	return days, total
}

// usageErr says in plain words why the management API refused, when the
// refusal is one a person can act on; other errors pass through.
func usageErr(err error) error {
	var oe *api.OptionError
	if errors.As(err, &oe) {
		switch oe.Param {
		case "region":
			return &usageError{"Usage is kept on the service's main host only; it cannot be asked for through a regional backend. Choose the global host in Settings to see it."}
		case "key":
			return &usageError{"Usage can be read with an API key only; an access token is not accepted there."}
		}
	}
	var ae *api.Error
	if errors.As(err, &ae) && (ae.Status == http.StatusForbidden || ae.Status == http.StatusUnauthorized) {
		return &usageError{"This key may not read the project's usage: it needs a scope that allows it (a member's or an owner's key). Use such a key, or see the usage in the service's console."}
	}
	return err
}
