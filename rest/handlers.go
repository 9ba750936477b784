package rest

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/app"
	"mirrorql/model"
)

// Options are the REST face's own settings; page sizes and the shard and
// realm of short ids are app's (app.Rules), read from the reader.
type Options struct {
	// Now is the clock for the schedule cache rule; nil means time.Now.
	Now func() time.Time
}

// Handlers serve the mirror node routes over the ledger: app's reads, and
// its store's where app adds nothing.
type Handlers struct {
	app   *app.Ledger
	store app.Store
	opts  Options
	rules app.Rules
}

// New builds the handlers over l.
func New(l *app.Ledger, o Options) *Handlers {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handlers{app: l, store: l.Store(), opts: o, rules: l.Rules()}
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

// GET /api/v1/topics/{topicId}/messages: the filters are app's (app.Filters);
// the face splits the operators off and checks encoding, limit and order.
func (h *Handlers) topicMessages(c echo.Context) error {
	topicParam := pathParam(c, "topicId")
	var syntax app.Problems
	if !app.CheckTopicID(&syntax, topicParam) {
		return syntax.Err() // alone, before the query's values (docs/reference/behavior.md §2.1)
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	p := listParams{limit: h.rules.Pages.Default, order: model.Asc}
	var filters app.Filters
	utf8 := false
	p.each(q, acceptedMessageParams, func(key string, op model.Operator, value string) bool {
		switch key {
		case app.ParamSequenceNumber, app.ParamTimestamp:
			filters.Add(&p.problems, key, op, value)
			return true
		case "encoding":
			u, ok := parseEncoding(op, value)
			utf8 = u
			return ok
		}
		return p.common(key, value, h.rules.Pages)
	})
	if err := p.err(); err != nil {
		return err
	}
	topic, err := h.rules.TopicID(topicParam)
	if err != nil {
		return err
	}
	var f app.MessageQuery
	filters.Messages(&f)
	f.TopicID, f.Order, f.Limit, f.NoSuchTopic = topic, p.order, p.limit, topicParam
	page, err := h.app.TopicMessages(c.Request().Context(), f)
	if err != nil {
		return err
	}
	var next *string
	if page.Full {
		after := model.Condition[string]{Op: page.Next.Op, Value: page.Next.Value.String()}
		next = nextLink(originalPath(c), q, "timestamp", after, timestampBound)
	}
	rows := page.Rows
	return sendPage(c, `{"messages":[`, len(rows), func(j *jsonBuf, i int) { j.message(&rows[i], utf8) }, next, cacheDefault)
}

// sendPage writes a list page, {"<items>":[…],"links":{"next":…}}, the
// opening given with its bracket, and sends it with the Node headers.
func sendPage(c echo.Context, open string, n int, item func(j *jsonBuf, i int), next *string, cacheControl string) error {
	j := getBuf()
	defer putBuf(j)
	j.raw(open)
	for i := range n {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		item(j, i)
	}
	j.raw(`],"links":{"next":`)
	j.strPtr(next)
	j.raw(`}}`)
	return sendNode(c, j.b, cacheControl, next)
}

func timestampBound(s string) (int64, bool) {
	ts, err := model.ParseTimestamp(s)
	return int64(ts), err == nil
}

// GET /api/v1/topics/{topicId}/messages/{sequenceNumber}, and the same path
// with a consensus timestamp (docs/reference/DECISIONS.md #8).
func (h *Handlers) topicMessage(c echo.Context) error {
	q, err := query(c)
	if err != nil {
		return err
	}
	if err := rejectQuery(q); err != nil {
		return err
	}
	topicParam, key := pathParam(c, "topicId"), pathParam(c, "sequenceNumber")
	var p app.Problems
	app.CheckTopicID(&p, topicParam)
	byTimestamp := strings.Contains(key, ".")
	var seq int64
	var ts model.Timestamp
	if byTimestamp {
		if ts, err = model.ParseTimestamp(key); err != nil {
			p.Invalid("consensus_timestamp")
		}
	} else if v, ok := parseSequenceNumber(key); ok {
		seq = v
	} else {
		p.Invalid("sequencenumber")
	}
	if err := p.Err(); err != nil {
		return err
	}
	topic, err := h.rules.TopicID(topicParam)
	if err != nil {
		return err
	}
	var m *model.TopicMessage
	if byTimestamp {
		m, err = h.app.MessageOfTopicAt(c.Request().Context(), topic, ts)
	} else {
		m, err = h.store.MessageBySequence(c.Request().Context(), topic, seq)
	}
	if err != nil {
		return err
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
		return app.Invalid(app.InvalidParameter("consensus_timestamp"))
	}
	m, err := h.store.MessageByTimestamp(c.Request().Context(), ts)
	if err != nil {
		return err
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
	p := listParams{limit: h.rules.Pages.Default, order: model.Asc}
	var filters app.Filters
	p.each(q, acceptedScheduleParams, func(key string, op model.Operator, value string) bool {
		if key == app.ParamAccountID || key == app.ParamScheduleID {
			filters.Add(&p.problems, key, op, value)
			return true
		}
		return p.common(key, value, h.rules.Pages)
	})
	if err := p.err(); err != nil {
		return err
	}
	var f app.ScheduleQuery
	f.Order, f.Limit = p.order, p.limit
	if err := filters.Schedules(h.rules.Entities, &f); err != nil {
		return err
	}
	page, err := h.app.Schedules(c.Request().Context(), f)
	if err != nil {
		return err
	}
	var next *string
	if page.Full {
		after := model.Condition[string]{Op: page.Next.Op, Value: page.Next.Value.String()}
		next = nextLink(originalPath(c), q, "schedule.id", after, func(s string) (int64, bool) {
			id, err := h.rules.Entities.ParseEntityID(s, true)
			return int64(id), err == nil
		})
	}
	rows := page.Rows
	return sendPage(c, `{"schedules":[`, len(rows), func(j *jsonBuf, i int) { j.schedule(&rows[i], true) }, next, cacheSchedules)
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
	id, err := h.rules.Entities.ParseEntityID(pathParam(c, "scheduleId"), false)
	if err != nil {
		return app.EntityIDError(err, "scheduleid")
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
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

// GET /api/v1/topics/{id}: rest-java's bodies, content type and leniency
// (unknown query parameters are ignored).
func (h *Handlers) topic(c echo.Context) error {
	if !javaTopic(originalPath(c)) { // the ingress rule (routes.go)
		return app.ErrNotFound
	}
	if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
		c.Response().Header().Set("Allow", "GET")
		return &javaError{status: http.StatusMethodNotAllowed, detail: "Request method '" + m + "' is not supported"}
	}
	id, ok := h.rules.Entities.ParseEntityIDNum(pathParam(c, "id"))
	if !ok {
		return &javaError{status: http.StatusBadRequest, detail: "Failed to convert 'id'"}
	}
	t, err := h.store.Topic(c.Request().Context(), id)
	if err != nil && !app.IsNotFound(err) {
		return javaUnavailable{app.AsUnavailable(err)}
	}
	switch {
	case err != nil, !t.HasTopic:
		return &javaError{status: http.StatusNotFound, detail: "Topic not found"}
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
