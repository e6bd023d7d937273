package registry

// Runner is a self-hosted runner as GitHub lists it.
type Runner struct {
	ID     int64    `json:"id"`
	Name   string   `json:"name"`
	Status string   `json:"status"` // online or offline
	Busy   bool     `json:"busy"`
	Labels []string `json:"labels,omitempty"`
}
