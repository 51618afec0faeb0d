package memory

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Cursors are opaque to clients: base64 of "unix-nanos|id".
func encodeCursor(c Cursor) string {
	raw := strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "|" + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	nanos, id, ok := strings.Cut(string(raw), "|")
	n, nerr := strconv.ParseInt(nanos, 10, 64)
	if err != nil || nerr != nil || !ok || id == "" {
		return Cursor{}, errors.New("malformed cursor")
	}
	return Cursor{CreatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}
