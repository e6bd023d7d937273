package scaleset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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

// The operations whose errors ServiceError.Is reads without a typeName.
const (
	opCreateSession  = "create session"
	opRefreshSession = "refresh session"
	opGetMessage     = "get message"
)

// ErrNoMessageQueue: the service opened a session with no message queue (seen
// during a broker incident, ARC #4370). CreateSession deleted that session,
// which would otherwise hold the set until it expires; try again later.
var ErrNoMessageQueue = errors.New("scaleset: the session has no message queue")

// CreateSession opens the set's one session. ErrSessionConflict while another
// lives; ErrScaleSetNotFound when the set is gone; ErrNoMessageQueue when the
// service answered without a queue.
func (c *Client) CreateSession(ctx context.Context, scope github.Scope, setID int64, owner string) (Session, error) {
	var out sessionJSON
	err := c.call(ctx, scope, setID, opCreateSession, http.MethodPost, fmt.Sprintf("%s/%d/sessions", setsPath, setID), map[string]string{"ownerName": owner}, &out)
	if err != nil {
		return Session{}, err
	}
	switch {
	case out.SessionID == "":
		return Session{}, fmt.Errorf("scaleset: create session: the answer has no session id")
	case out.MessageQueueURL == "" || out.MessageQueueAccessToken == "":
		if err := c.DeleteSession(ctx, scope, setID, out.SessionID); err != nil && !errors.Is(err, ErrSessionExpired) && !errors.Is(err, ErrSessionNotFound) {
			return Session{}, fmt.Errorf("%w; deleting it failed, so it holds the set until it expires: %w", ErrNoMessageQueue, err)
		}
		return Session{}, ErrNoMessageQueue
	}
	return c.keep(out), nil
}

// RefreshSession renews a session's queue token, which is also how another
// process takes a session over. ErrSessionNotFound when it expired.
func (c *Client) RefreshSession(ctx context.Context, scope github.Scope, setID int64, sessionID string) (Session, error) {
	var out sessionJSON
	path := fmt.Sprintf("%s/%d/sessions/%s", setsPath, setID, sessionID)
	if err := c.call(ctx, scope, setID, opRefreshSession, http.MethodPatch, path, nil, &out); err != nil {
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
// ErrSessionExpired (a 400) or ErrSessionNotFound when it had ended already.
func (c *Client) DeleteSession(ctx context.Context, scope github.Scope, setID int64, sessionID string) error {
	path := fmt.Sprintf("%s/%d/sessions/%s", setsPath, setID, sessionID)
	err := c.call(ctx, scope, setID, "delete session", http.MethodDelete, path, nil, nil)
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

// JobMessagesType is the type of the messages a scale set's queue carries.
const JobMessagesType = "RunnerScaleSetJobMessages"

// GetMessage long-polls the session's queue for the first message after
// lastMessageID (0: the oldest not deleted). It returns nil when the service
// had none (202, or a 200 with no body). maxCapacity tells the service how many
// runners the set may have, so it assigns no more jobs than that. A message of
// another type than JobMessagesType comes back with its Type and no jobs.
func (c *Client) GetMessage(ctx context.Context, scope github.Scope, setID int64, sessionID string, lastMessageID int64, maxCapacity int) (*Message, error) {
	var msg *Message
	err := c.queueCall(ctx, scope, setID, sessionID, func(access sessionAccess) error {
		target, err := url.Parse(access.queueURL)
		if err != nil {
			return fmt.Errorf("scaleset: get message: the queue URL does not parse")
		}
		// The queue URL is used as given: only the cursor joins its query.
		if lastMessageID > 0 {
			q := target.Query()
			q.Set("lastMessageId", strconv.FormatInt(lastMessageID, 10))
			target.RawQuery = q.Encode()
		}
		req, err := c.request(ctx, http.MethodGet, target.String(), access.token, setID, nil)
		if err != nil {
			return fmt.Errorf("scaleset: get message: %w", err)
		}
		req.Header.Set("X-ScaleSetMaxCapacity", strconv.Itoa(maxCapacity))
		var out messageJSON
		if err := c.do(req, opGetMessage, &out); err != nil {
			return err
		}
		if out.MessageID == 0 { // 202, or an empty 200
			return nil
		}
		m := &Message{ID: out.MessageID, Type: out.MessageType}
		if out.MessageType != JobMessagesType {
			msg = m
			return nil
		}
		m.Statistics = out.Statistics
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
// A message the queue no longer has (404) was acknowledged already.
func (c *Client) DeleteMessage(ctx context.Context, scope github.Scope, setID int64, sessionID string, messageID int64) error {
	return c.queueCall(ctx, scope, setID, sessionID, func(access sessionAccess) error {
		target, err := url.Parse(access.queueURL)
		if err != nil {
			return fmt.Errorf("scaleset: delete message: the queue URL does not parse")
		}
		target.Path = strings.TrimSuffix(target.Path, "/") + "/" + strconv.FormatInt(messageID, 10)
		req, err := c.request(ctx, http.MethodDelete, target.String(), access.token, setID, nil)
		if err != nil {
			return fmt.Errorf("scaleset: delete message: %w", err)
		}
		err = c.do(req, "delete message", nil)
		if StatusOf(err) == http.StatusNotFound && !errors.Is(err, ErrSessionNotFound) && !errors.Is(err, ErrScaleSetNotFound) {
			return nil
		}
		return err
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
		req, err := c.request(ctx, http.MethodPost, serviceURL(fmt.Sprintf("%s%s/%d/acquirejobs", a.base, setsPath, setID)), access.token, setID, requestIDs)
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
	if err := c.call(ctx, scope, setID, "acquirable jobs", http.MethodGet, fmt.Sprintf("%s/%d/acquirablejobs", setsPath, setID), nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
