package fakegithub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

func pagination(r *http.Request) (page, perPage int) {
	page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	perPage, _ = strconv.Atoi(r.URL.Query().Get("per_page"))
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = 30
	}
	if perPage > 100 {
		perPage = 100
	}
	return page, perPage
}

func pageOf[T any](all []T, page, perPage int) []T {
	start := (page - 1) * perPage
	if start >= len(all) {
		return nil
	}
	end := min(start+perPage, len(all))
	return all[start:end]
}

// writeList answers a list endpoint as GitHub does: Link headers for pages,
// Cache-Control max-age, an ETag, and 304 when If-None-Match still matches.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, total, page, perPage int, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	sum := sha256.Sum256(data)
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("Cache-Control", fmt.Sprintf("private, max-age=%d, s-maxage=%d", int(s.listMaxAge.Seconds()), int(s.listMaxAge.Seconds())))
	h.Set("ETag", etag)
	h.Set("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
	if last := (total + perPage - 1) / perPage; page < last {
		u := *r.URL
		q := u.Query()
		q.Set("per_page", strconv.Itoa(perPage))
		q.Set("page", strconv.Itoa(page+1))
		u.RawQuery = q.Encode()
		next := u.String()
		q.Set("page", strconv.Itoa(last))
		u.RawQuery = q.Encode()
		h.Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next, u.String()))
	}
	if match := r.Header.Get("If-None-Match"); match != "" && match == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(bytes.TrimSpace(data))
}
