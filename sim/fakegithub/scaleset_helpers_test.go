package fakegithub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// The scale set tests talk to the fake over plain HTTP, as a client that
// reads the protocol literally would, so they check the wire forms and not
// what a client makes of them.

const setsURL = "_apis/runtime/runnerscalesets"

// actionsConn is an admin connection to the fake's Actions service.
type actionsConn struct {
	t           *testing.T
	base, admin string
}

// answer is a response, its body read.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(bytes.TrimPrefix(a.Body, []byte("\xef\xbb\xbf")), v), "body %q", a.Body)
}

// exception is the error body's typeName and message.
func (a answer) exception(t *testing.T) (string, string) {
	t.Helper()
	var e struct{ TypeName, Message string }
	a.decode(t, &e)
	return e.TypeName, e.Message
}

func newActions(t *testing.T, opts fakegithub.Options) (*fakegithub.Server, *actionsConn) {
	t.Helper()
	srv, err := fakegithub.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	reg := send(t, http.MethodPost, srv.URL+"orgs/octo/actions/runners/registration-token", "Bearer ghp_test", nil, nil)
	require.Equal(t, http.StatusCreated, reg.Status)
	var token struct{ Token string }
	reg.decode(t, &token)
	conn := send(t, http.MethodPost, srv.URL+"actions/runner-registration", "RemoteAuth "+token.Token,
		map[string]string{"url": "https://github.com/octo", "runner_event": "register"}, nil)
	require.Equal(t, http.StatusOK, conn.Status)
	var admin struct{ URL, Token string }
	conn.decode(t, &admin)
	return srv, &actionsConn{t: t, base: admin.URL, admin: admin.Token}
}

// send makes one request; header adds headers (a User-Agent, say).
func send(t *testing.T, method, target, auth string, body any, header map[string]string) answer {
	t.Helper()
	var in io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		in = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, target, in)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// call is an admin call to path under the service's base, with api-version.
func (c *actionsConn) call(method, path string, body any) answer {
	c.t.Helper()
	target := c.base + path
	if strings.Contains(target, "?") {
		target += "&api-version=6.0-preview"
	} else {
		target += "?api-version=6.0-preview"
	}
	return send(c.t, method, target, "Bearer "+c.admin, body, map[string]string{"User-Agent": "scaleset-test/1.0"})
}

func (c *actionsConn) createSet(name string) int64 {
	c.t.Helper()
	a := c.call(http.MethodPost, setsURL, map[string]any{"name": name, "runnerGroupId": 1,
		"labels": []map[string]string{{"name": name, "type": "System"}}})
	require.Equal(c.t, http.StatusOK, a.Status, "%s", a.Body)
	var set struct{ ID int64 }
	a.decode(c.t, &set)
	return set.ID
}

// session is a created session as the service answers it.
type session struct {
	SessionID               string
	OwnerName               string
	MessageQueueURL         string
	MessageQueueAccessToken string
	Statistics              *fakegithub.ScaleSetStatistics
}

func (c *actionsConn) createSession(setID int64, owner string) (session, answer) {
	c.t.Helper()
	a := c.call(http.MethodPost, fmt.Sprintf("%s/%d/sessions", setsURL, setID), map[string]string{"ownerName": owner})
	var s session
	if a.Status == http.StatusOK {
		a.decode(c.t, &s)
	}
	return s, a
}

func (c *actionsConn) sessionCall(method string, setID int64, sid string) answer {
	c.t.Helper()
	return c.call(method, fmt.Sprintf("%s/%d/sessions/%s", setsURL, setID, sid), nil)
}

// poll GETs the queue URL as given, lastMessageId added when not 0, with the
// capacity header when capacity is not negative.
func poll(t *testing.T, s session, last int64, capacity int) answer {
	t.Helper()
	target := s.MessageQueueURL
	if last != 0 {
		u, err := url.Parse(target)
		require.NoError(t, err)
		q := u.Query()
		q.Set("lastMessageId", fmt.Sprint(last))
		u.RawQuery = q.Encode()
		target = u.String()
	}
	header := map[string]string{"Accept": "application/json; api-version=6.0-preview"}
	if capacity >= 0 {
		header["X-ScaleSetMaxCapacity"] = fmt.Sprint(capacity)
	}
	return send(t, http.MethodGet, target, "Bearer "+s.MessageQueueAccessToken, nil, header)
}

// ack DELETEs a message: /{id} added to the queue URL's path, its query kept.
func ack(t *testing.T, s session, id int64) answer {
	t.Helper()
	u, err := url.Parse(s.MessageQueueURL)
	require.NoError(t, err)
	u.Path = fmt.Sprintf("%s/%d", u.Path, id)
	return send(t, http.MethodDelete, u.String(), "Bearer "+s.MessageQueueAccessToken, nil, nil)
}

// envelope is a message as the queue answers it.
type envelope struct {
	MessageID   int64
	MessageType string
	Body        string
	Statistics  fakegithub.ScaleSetStatistics
}

func shortHold() fakegithub.Options {
	return fakegithub.Options{Actions: fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond}}
}
