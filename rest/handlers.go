package rest

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/db"
	"mirrorql/model"
)

// Options are the REST face's settings.
type Options struct {
	Defaults     model.EntityDefaults
	LimitDefault int
	LimitMax     int
	// Now is the clock for the schedule cache rule; nil means time.Now.
	Now func() time.Time
}

// Handlers serve the mirror node routes over the query layer.
type Handlers struct {
	db   *db.DB
	opts Options
}

// New builds the handlers.
func New(d *db.DB, o Options) *Handlers {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handlers{db: d, opts: o}
}

const (
	cacheDefault       = "public, max-age=1"
	cacheMessage       = "public, max-age=600"
	cacheSchedules     = "public, max-age=10"
	cacheFinalSchedule = "public, max-age=3600"
	cacheTopic         = "public, max-age=5"
)

var (
	acceptedMessageParams  = map[string]bool{"encoding": true, "limit": true, "order": true, "sequencenumber": true, "timestamp": true}
	acceptedScheduleParams = map[string]bool{"account.id": true, "limit": true, "order": true, "schedule.id": true}
)

// dbError maps a query-layer failure: not found stays not found, anything
// else is the mirror node's 503 (DECISIONS #9).
func dbError(err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return errNotFound
	}
	return &unavailable{cause: err}
}

// DatabaseError is dbError for middleware that queries the database before
// a handler runs: the same mapping, so the same body.
func DatabaseError(err error) error { return dbError(err) }

// unavailable carries the cause to the logs while the client sees only the
// generic 503 body.
type unavailable struct{ cause error }

func (u *unavailable) Error() string { return "database: " + u.cause.Error() }
func (u *unavailable) Unwrap() error { return errUnavailable }

// outage reports whether err is a 503 because the database cannot be
// reached: db.Health logs that once per change of state, so the error
// handler does not log it once per request.
func outage(err error) bool {
	var u *unavailable
	var ju *javaUnavailable
	return errors.As(err, &u) && db.Unavailable(u.cause) || errors.As(err, &ju) && db.Unavailable(ju.cause)
}

// GET /api/v1/topics/{topicId}/messages
func (h *Handlers) topicMessages(c echo.Context) error {
	topicParam := pathParam(c, "topicId")
	if !model.ValidEntityIDSyntax(topicParam, false) {
		return badRequest(invalidParameter("topic.id"))
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	p := listParams{limit: h.opts.LimitDefault, order: model.Asc}
	var f db.MessageFilter
	utf8 := false
	p.each(q, acceptedMessageParams, func(key string, op model.Operator, value string) bool {
		switch key {
		case "sequencenumber":
			v, ok := parseSequenceNumber(value)
			f.SequenceNumber = append(f.SequenceNumber, model.Condition[int64]{Op: op, Value: v})
			return ok
		case "timestamp":
			ts, err := model.ParseTimestamp(value)
			f.Timestamp = append(f.Timestamp, model.Condition[model.Timestamp]{Op: op, Value: ts})
			return err == nil
		case "encoding":
			u, ok := parseEncoding(op, value)
			utf8 = u
			return ok
		}
		return p.common(key, value, h.opts.LimitMax)
	})
	if err := p.err(); err != nil {
		return err
	}
	topic, err := h.opts.Defaults.ParseEntityID(topicParam, false)
	if err != nil {
		return entityIDError(err, "")
	}
	f.TopicID, f.Order, f.Limit = topic, p.order, p.limit
	ctx := c.Request().Context()
	rows, err := h.db.MessagesOfTopic(ctx, f)
	if err != nil {
		return dbError(err)
	}
	if len(rows) == 0 {
		exists, err := h.db.TopicExists(ctx, topic)
		if err != nil {
			return dbError(err)
		}
		if !exists {
			return &apiError{status: http.StatusNotFound, messages: []string{"No such topic id - " + topicParam}}
		}
	}
	j := getBuf()
	defer putBuf(j)
	j.raw(`{"messages":[`)
	for i := range rows {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.message(&rows[i], utf8)
	}
	j.raw(`],"links":{"next":`)
	var next *string
	if len(rows) == p.limit {
		last := rows[len(rows)-1].ConsensusTimestamp.String()
		next = nextLink(originalPath(c), q, "timestamp", p.order, last, timestampBound)
	}
	j.strPtr(next)
	j.raw(`}}`)
	return sendNode(c, j.b, cacheDefault, next)
}

func timestampBound(s string) (int64, bool) {
	ts, err := model.ParseTimestamp(s)
	return int64(ts), err == nil
}

// GET /api/v1/topics/{topicId}/messages/{sequenceNumber}, and the same path
// with a consensus timestamp (DECISIONS #8).
func (h *Handlers) topicMessage(c echo.Context) error {
	q, err := query(c)
	if err != nil {
		return err
	}
	if err := rejectQuery(q); err != nil {
		return err
	}
	topicParam, key := pathParam(c, "topicId"), pathParam(c, "sequenceNumber")
	var msgs []string
	if !model.ValidEntityIDSyntax(topicParam, false) {
		msgs = append(msgs, invalidParameter("topic.id"))
	}
	byTimestamp := strings.Contains(key, ".")
	var seq int64
	var ts model.Timestamp
	if byTimestamp {
		if ts, err = model.ParseTimestamp(key); err != nil {
			msgs = append(msgs, invalidParameter("consensus_timestamp"))
		}
	} else if v, ok := parseSequenceNumber(key); ok {
		seq = v
	} else {
		msgs = append(msgs, invalidParameter("sequencenumber"))
	}
	if len(msgs) > 0 {
		return badRequest(msgs...)
	}
	topic, err := h.opts.Defaults.ParseEntityID(topicParam, false)
	if err != nil {
		return entityIDError(err, "")
	}
	var m *model.TopicMessage
	if byTimestamp {
		m, err = h.db.MessageByTimestamp(c.Request().Context(), ts)
		if err == nil && m.TopicID != topic {
			err = db.ErrNotFound
		}
	} else {
		m, err = h.db.MessageBySequence(c.Request().Context(), topic, seq)
	}
	if err != nil {
		return dbError(err)
	}
	return sendMessage(c, m)
}

// GET /api/v1/topics/messages/{timestamp}
func (h *Handlers) messageByTimestamp(c echo.Context) error {
	q, err := query(c)
	if err != nil {
		return err
	}
	if err := rejectQuery(q); err != nil {
		return err
	}
	ts, err := model.ParseTimestamp(pathParam(c, "timestamp"))
	if err != nil {
		return badRequest(invalidParameter("consensus_timestamp"))
	}
	m, err := h.db.MessageByTimestamp(c.Request().Context(), ts)
	if err != nil {
		return dbError(err)
	}
	return sendMessage(c, m)
}

func sendMessage(c echo.Context, m *model.TopicMessage) error {
	j := getBuf()
	defer putBuf(j)
	j.message(m, false)
	return sendNode(c, j.b, cacheMessage, nil)
}

// GET /api/v1/schedules
func (h *Handlers) schedules(c echo.Context) error {
	q, err := query(c)
	if err != nil {
		return err
	}
	p := listParams{limit: h.opts.LimitDefault, order: model.Asc}
	type idValue struct {
		key   string
		op    model.Operator
		value string
	}
	var ids []idValue
	p.each(q, acceptedScheduleParams, func(key string, op model.Operator, value string) bool {
		if key == "account.id" || key == "schedule.id" {
			ids = append(ids, idValue{key, op, value})
			return model.ValidEntityIDSyntax(value, true)
		}
		return p.common(key, value, h.opts.LimitMax)
	})
	if err := p.err(); err != nil {
		return err
	}
	f := db.ScheduleFilter{Order: p.order, Limit: p.limit}
	for _, v := range ids {
		id, err := h.opts.Defaults.ParseEntityID(v.value, true)
		switch {
		case errors.Is(err, model.ErrOpaqueEVMAddress):
			f.NoMatch = true
		case err != nil:
			return entityIDError(err, "")
		case v.key == "account.id":
			f.CreatorAccountID = append(f.CreatorAccountID, model.Condition[model.EntityID]{Op: v.op, Value: id})
		default:
			f.ScheduleID = append(f.ScheduleID, model.Condition[model.EntityID]{Op: v.op, Value: id})
		}
	}
	rows, err := h.db.Schedules(c.Request().Context(), f)
	if err != nil {
		return dbError(err)
	}
	j := getBuf()
	defer putBuf(j)
	j.raw(`{"schedules":[`)
	for i := range rows {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.schedule(&rows[i], true)
	}
	j.raw(`],"links":{"next":`)
	var next *string
	if len(rows) == p.limit {
		last := rows[len(rows)-1].ScheduleID.String()
		next = nextLink(originalPath(c), q, "schedule.id", p.order, last, func(s string) (int64, bool) {
			id, err := h.opts.Defaults.ParseEntityID(s, true)
			return int64(id), err == nil
		})
	}
	j.strPtr(next)
	j.raw(`}}`)
	return sendNode(c, j.b, cacheSchedules, next)
}

// GET /api/v1/schedules/{scheduleId}
func (h *Handlers) schedule(c echo.Context) error {
	q, err := query(c)
	if err != nil {
		return err
	}
	if err := rejectQuery(q); err != nil {
		return err
	}
	id, err := h.opts.Defaults.ParseEntityID(pathParam(c, "scheduleId"), false)
	if err != nil {
		return entityIDError(err, "scheduleid")
	}
	s, err := h.db.Schedule(c.Request().Context(), id)
	if err != nil {
		return dbError(err)
	}
	cache := cacheDefault
	if s.IsFinal(model.Timestamp(h.opts.Now().UnixNano())) {
		cache = cacheFinalSchedule
	}
	j := getBuf()
	defer putBuf(j)
	j.schedule(s, false)
	return sendNode(c, j.b, cache, nil)
}

// javaTopicPath is the ingress rule that sends a path to rest-java
// (behavior.md §0); every other topics path is the Node service's.
var javaTopicPath = regexp.MustCompile(`^/api/v1/topics/(\d+\.){0,2}\d+$`)

// GET /api/v1/topics/{id}: rest-java's bodies, content type and leniency
// (unknown query parameters are ignored).
func (h *Handlers) topic(c echo.Context) error {
	if !javaTopicPath.MatchString(originalPath(c)) {
		return errNotFound
	}
	if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
		c.Response().Header().Set("Allow", "GET")
		return &javaError{status: http.StatusMethodNotAllowed, detail: "Request method '" + m + "' is not supported"}
	}
	id, ok := h.opts.Defaults.ParseEntityIDNum(pathParam(c, "id"))
	if !ok {
		return &javaError{status: http.StatusBadRequest, detail: "Failed to convert 'id'"}
	}
	t, err := h.db.Topic(c.Request().Context(), id)
	switch {
	case errors.Is(err, db.ErrNotFound), err == nil && !t.HasTopic:
		return &javaError{status: http.StatusNotFound, detail: "Topic not found"}
	case err != nil:
		return &javaUnavailable{cause: err}
	case !t.HasEntity:
		return &javaError{status: http.StatusNotFound, detail: "Entity not found"}
	case !t.HasCustomFee:
		return &javaError{status: http.StatusNotFound, detail: "Custom fee for entity not found"}
	}
	j := getBuf()
	defer putBuf(j)
	j.topic(t)
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentType, "application/json")
	hdr.Set("Cache-Control", cacheTopic)
	return c.Blob(http.StatusOK, "application/json", j.b)
}

// javaUnavailable is rest-java's 503: reason phrase and an empty detail.
type javaUnavailable struct{ cause error }

func (u *javaUnavailable) Error() string { return "database: " + u.cause.Error() }
func (u *javaUnavailable) Unwrap() error {
	return &javaError{status: http.StatusServiceUnavailable, detail: ""}
}
