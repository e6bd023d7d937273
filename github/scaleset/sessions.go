package scaleset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/arcflow/arcflow/github"
)

type sessionJSON struct {
	SessionID               string     `json:"sessionId"`
	OwnerName               string     `json:"ownerName"`
	MessageQueueURL         string     `json:"messageQueueUrl"`
	MessageQueueAccessToken string     `json:"messageQueueAccessToken"`
	Statistics              Statistics `json:"statistics"`
}

// keep stores the session's queue access in the client and returns what the
// caller may see.
func (c *Client) keep(s sessionJSON) Session {
	c.mu.Lock()
	c.sessions[s.SessionID] = sessionAccess{queueURL: s.MessageQueueURL, token: s.MessageQueueAccessToken}
	c.mu.Unlock()
	return Session{ID: s.SessionID, OwnerName: s.OwnerName, Statistics: s.Statistics}
}

// CreateSession opens the set's one session. ErrSessionConflict while another
// lives; ErrScaleSetNotFound when the set is gone.
func (c *Client) CreateSession(ctx context.Context, scope github.Scope, setID int64, owner string) (Session, error) {
	var out sessionJSON
	err := c.call(ctx, scope, "create session", http.MethodPost, fmt.Sprintf("%s/%d/sessions", setsPath, setID), map[string]string{"ownerName": owner}, &out)
	if err != nil {
		return Session{}, err
	}
	if out.SessionID == "" || out.MessageQueueURL == "" {
		return Session{}, fmt.Errorf("scaleset: create session: the answer has no session id or queue")
	}
	return c.keep(out), nil
}

// RefreshSession renews a session's queue token, which is also how another
// process takes a session over. ErrSessionNotFound when it expired.
func (c *Client) RefreshSession(ctx context.Context, scope github.Scope, setID int64, sessionID string) (Session, error) {
	var out sessionJSON
	path := fmt.Sprintf("%s/%d/sessions/%s", setsPath, setID, sessionID)
	if err := c.call(ctx, scope, "refresh session", http.MethodPatch, path, nil, &out); err != nil {
		return Session{}, err
	}
	if out.SessionID == "" {
		out.SessionID = sessionID
	}
	if out.MessageQueueURL == "" || out.MessageQueueAccessToken == "" {
		return Session{}, fmt.Errorf("scaleset: refresh session: the answer has no queue or token")
	}
	return c.keep(out), nil
}

// DeleteSession ends a session, so another listener may open one at once.
func (c *Client) DeleteSession(ctx context.Context, scope github.Scope, setID int64, sessionID string) error {
	path := fmt.Sprintf("%s/%d/sessions/%s", setsPath, setID, sessionID)
	err := c.call(ctx, scope, "delete session", http.MethodDelete, path, nil, nil)
	c.mu.Lock()
	delete(c.sessions, sessionID)
	c.mu.Unlock()
	return err
}

// queueCall makes a call with a session's queue token, refreshing the session
// first when this process holds no token for it, and once on a 401.
func (c *Client) queueCall(ctx context.Context, scope github.Scope, setID int64, sessionID string, call func(sessionAccess) error) error {
	for attempt := 0; ; attempt++ {
		c.mu.Lock()
		access, ok := c.sessions[sessionID]
		c.mu.Unlock()
		if !ok {
			if _, err := c.RefreshSession(ctx, scope, setID, sessionID); err != nil {
				return err
			}
			continue
		}
		err := call(access)
		if attempt == 0 && isStatus(err, http.StatusUnauthorized) {
			c.mu.Lock()
			delete(c.sessions, sessionID)
			c.mu.Unlock()
			continue
		}
		return err
	}
}

type messageJSON struct {
	MessageID   int64      `json:"messageId"`
	MessageType string     `json:"messageType"`
	Body        string     `json:"body"`
	Statistics  Statistics `json:"statistics"`
}

// GetMessage long-polls the session's queue for the first message after
// lastMessageID (0: the oldest not deleted). It returns nil when the service
// had none (202, or a 200 with no body). maxCapacity tells the service how many
// runners the set may have, so it assigns no more jobs than that.
func (c *Client) GetMessage(ctx context.Context, scope github.Scope, setID int64, sessionID string, lastMessageID int64, maxCapacity int) (*Message, error) {
	var msg *Message
	err := c.queueCall(ctx, scope, setID, sessionID, func(access sessionAccess) error {
		target := access.queueURL
		if lastMessageID > 0 {
			target += sep(target) + "lastMessageId=" + strconv.FormatInt(lastMessageID, 10)
		}
		req, err := c.request(ctx, http.MethodGet, target, access.token, nil)
		if err != nil {
			return fmt.Errorf("scaleset: get message: %w", err)
		}
		req.Header.Set("X-ScaleSetMaxCapacity", strconv.Itoa(maxCapacity))
		var out messageJSON
		if err := c.do(req, "get message", &out); err != nil {
			return err
		}
		if out.MessageID == 0 { // 202, or an empty 200
			return nil
		}
		m := &Message{ID: out.MessageID, Statistics: out.Statistics}
		if strings.TrimSpace(out.Body) != "" {
			if err := json.Unmarshal([]byte(out.Body), &m.Jobs); err != nil {
				return fmt.Errorf("scaleset: get message: message %d's body: %w", out.MessageID, err)
			}
		}
		msg = m
		return nil
	})
	return msg, err
}

// DeleteMessage acknowledges a message; the service redelivers it until then.
func (c *Client) DeleteMessage(ctx context.Context, scope github.Scope, setID int64, sessionID string, messageID int64) error {
	return c.queueCall(ctx, scope, setID, sessionID, func(access sessionAccess) error {
		base, query, _ := strings.Cut(access.queueURL, "?")
		target := strings.TrimSuffix(base, "/") + "/" + strconv.FormatInt(messageID, 10)
		if query != "" {
			target += "?" + query
		}
		req, err := c.request(ctx, http.MethodDelete, target, access.token, nil)
		if err != nil {
			return fmt.Errorf("scaleset: delete message: %w", err)
		}
		return c.do(req, "delete message", nil)
	})
}

// AcquireJobs asks for jobs by runner request id (GitHub Enterprise Server);
// it returns the ids acquired, which may be fewer.
func (c *Client) AcquireJobs(ctx context.Context, scope github.Scope, setID int64, sessionID string, requestIDs []int64) ([]int64, error) {
	var acquired []int64
	err := c.queueCall(ctx, scope, setID, sessionID, func(access sessionAccess) error {
		a, err := c.admin(ctx, scope)
		if err != nil {
			return err
		}
		req, err := c.request(ctx, http.MethodPost, fmt.Sprintf("%s%s/%d/acquirejobs", a.base, setsPath, setID), access.token, requestIDs)
		if err != nil {
			return fmt.Errorf("scaleset: acquire jobs: %w", err)
		}
		var out struct {
			Value []int64 `json:"value"`
		}
		if err := c.do(req, "acquire jobs", &out); err != nil {
			return err
		}
		acquired = out.Value
		return nil
	})
	return acquired, err
}

// AcquirableJobs lists the jobs the set may acquire (GitHub Enterprise Server).
func (c *Client) AcquirableJobs(ctx context.Context, scope github.Scope, setID int64) ([]JobMessage, error) {
	var out struct {
		Value []JobMessage `json:"value"`
	}
	if err := c.call(ctx, scope, "acquirable jobs", http.MethodGet, fmt.Sprintf("%s/%d/acquirablejobs", setsPath, setID), nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

func sep(target string) string {
	if strings.Contains(target, "?") {
		return "&"
	}
	return "?"
}
