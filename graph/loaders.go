package graph

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"mirrorql/app"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// loaders batch the nested fields of one request: every key asked for while
// a loader waits (Options.LoaderWait) is answered by one call of *app.Ledger, so a page
// of any size costs a constant number of statements. A node that came alone
// (no page of siblings) is answered by that call at once.
//
// Waiting alone would leave that to the scheduler: the nodes of a page run
// their resolvers in goroutines of their own, and one that starts late misses
// the batch. So the nodes a loader returns share a view.Page holding every
// row of its batch, and the first node of a page to ask for a nested field
// starts the loads of all its siblings at once (see the *Of methods): a
// page's keys join one batch, at every level of nesting, unless that loop
// itself is held up past the wait (a busy machine once split a batch in
// two: one statement more, the same answers).
type loaders struct {
	// topic: TopicMessage.topic (*app.Ledger.TopicsByID: topics with an entity row).
	topic *dataloader.Loader[model.EntityID, *view.Topic]
	// message: Topic.message (*app.Ledger.MessagesBySequence).
	message *dataloader.Loader[app.TopicSequence, *view.TopicMessage]
	// messages: Topic.messages (*app.Ledger.MessagesOfTopics, one call per
	// distinct query; the fields of one list share theirs).
	messages *dataloader.Loader[messagesKey, messagePage]
	// chunks: TopicMessage.chunks and fullMessage (*app.Ledger.ChunksOf).
	chunks *dataloader.Loader[*model.TopicMessage, messageRows]
	// latest: Topic.latestMessage and messageCount (*app.Ledger.LatestMessages).
	latest *dataloader.Loader[model.EntityID, *view.TopicMessage]

	mu      sync.Mutex
	queries map[string]app.MessageQuery

	// single: the loads of nodes without siblings, by singleKey (alone)
	single sync.Map

	// The loaders are made on a request's first nested field: most
	// requests have none, and making four loaders is a visible share of a
	// small request's allocations.
	app   *app.Ledger
	store app.Store // the batches app adds nothing to
	wait  time.Duration
	once  sync.Once
}

// messageRows are one key's rows and the page of the whole batch they
// belong to (Rows of which they are a part).
type messageRows struct {
	rows []model.TopicMessage
	page *view.Page[model.TopicMessage]
}

// messagePage is one topic's page of messages as app paged it, its rows a
// part of the whole batch's (shared).
type messagePage struct {
	app.MessagePage
	shared *view.Page[model.TopicMessage]
}

type messagesKey struct {
	topic model.EntityID
	query string // queryKey of a query registered in loaders.queries
}

type loadersKey struct{}

func newLoaders(r *app.Ledger, wait time.Duration) *loaders {
	return &loaders{app: r, store: r.Store(), wait: wait}
}

// ready makes the loaders, once.
func (l *loaders) ready() { l.once.Do(l.make) }

func (l *loaders) make() {
	wait := l.wait
	l.queries = map[string]app.MessageQuery{}
	l.topic = dataloader.NewBatchedLoader(l.topics, dataloader.WithWait[model.EntityID, *view.Topic](wait))
	l.message = dataloader.NewBatchedLoader(l.messagesBySequence, dataloader.WithWait[app.TopicSequence, *view.TopicMessage](wait))
	l.messages = dataloader.NewBatchedLoader(l.pages, dataloader.WithWait[messagesKey, messagePage](wait))
	l.latest = dataloader.NewBatchedLoader(l.latestMessages, dataloader.WithWait[model.EntityID, *view.TopicMessage](wait))
	l.chunks = dataloader.NewBatchedLoader(l.chunkRows, dataloader.WithWait[*model.TopicMessage, messageRows](wait))
}

// The batch functions of the loaders: one call of the core for a batch's
// keys, their results in the keys' order.

func (l *loaders) topics(ctx context.Context, ids []model.EntityID) []*dataloader.Result[*view.Topic] {
	rows, err := l.store.TopicsByID(ctx, ids)
	if err != nil {
		return failAll[*view.Topic](len(ids), err)
	}
	page := &view.Page[model.Topic]{Rows: rows}
	byID := make(map[model.EntityID]*view.Topic, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &view.Topic{Row: &rows[i], Page: page}
	}
	return resultsOf(ids, func(id model.EntityID) *view.Topic { return byID[id] })
}

func (l *loaders) messagesBySequence(ctx context.Context, keys []app.TopicSequence) []*dataloader.Result[*view.TopicMessage] {
	found, err := l.store.MessagesBySequence(ctx, keys)
	if err != nil {
		return failAll[*view.TopicMessage](len(keys), err)
	}
	return oneMessageEach(keys, found)
}

func (l *loaders) pages(ctx context.Context, keys []messagesKey) []*dataloader.Result[messagePage] {
	byQuery := map[string][]model.EntityID{}
	for _, k := range keys {
		byQuery[k.query] = append(byQuery[k.query], k.topic)
	}
	found := make([]app.MessagePage, len(keys))
	index := make(map[messagesKey]int, len(keys))
	for i, k := range keys {
		index[k] = i
	}
	for qk, topics := range byQuery {
		l.mu.Lock()
		q := l.queries[qk]
		l.mu.Unlock()
		pages, err := l.app.MessagesOfTopics(ctx, topics, q)
		if err != nil {
			return failAll[messagePage](len(keys), err)
		}
		for _, t := range topics {
			found[index[messagesKey{t, qk}]] = pages[t]
		}
	}
	lists := make([][]model.TopicMessage, len(found))
	for i := range found {
		lists[i] = found[i].Rows
	}
	parts, shared := shareRows(lists)
	out := make([]*dataloader.Result[messagePage], len(found))
	for i := range found {
		found[i].Rows = parts[i]
		out[i] = &dataloader.Result[messagePage]{Data: messagePage{found[i], shared}}
	}
	return out
}

func (l *loaders) latestMessages(ctx context.Context, ids []model.EntityID) []*dataloader.Result[*view.TopicMessage] {
	found, err := l.store.LatestMessages(ctx, ids)
	if err != nil {
		return failAll[*view.TopicMessage](len(ids), err)
	}
	return oneMessageEach(ids, found)
}

func (l *loaders) chunkRows(ctx context.Context, msgs []*model.TopicMessage) []*dataloader.Result[messageRows] {
	chunks, err := l.store.ChunksOf(ctx, msgs)
	if err != nil {
		return failAll[messageRows](len(msgs), err)
	}
	parts, shared := shareRows(chunks)
	out := make([]*dataloader.Result[messageRows], len(parts))
	for i := range parts {
		out[i] = &dataloader.Result[messageRows]{Data: messageRows{rows: parts[i], page: shared}}
	}
	return out
}

// oneMessageEach answers a batch whose keys each name at most one message
// (found, by key): the messages are the rows of the batch's page, in the
// order of their keys; a key asked for twice is one row.
func oneMessageEach[K comparable](keys []K, found map[K]*model.TopicMessage) []*dataloader.Result[*view.TopicMessage] {
	rows := make([]model.TopicMessage, 0, len(found))
	var rowKeys []K
	for _, k := range keys {
		if m := found[k]; m != nil {
			rows = append(rows, *m)
			rowKeys = append(rowKeys, k)
			delete(found, k)
		}
	}
	page := &view.Page[model.TopicMessage]{Rows: rows}
	byKey := make(map[K]*view.TopicMessage, len(rows))
	for i, k := range rowKeys {
		byKey[k] = &view.TopicMessage{Row: &rows[i], Page: page}
	}
	return resultsOf(keys, func(k K) *view.TopicMessage { return byKey[k] })
}

// shareRows copies the lists of a batch into one backing array, the rows of
// the batch's page, and returns each list as its part of it.
func shareRows(lists [][]model.TopicMessage) ([][]model.TopicMessage, *view.Page[model.TopicMessage]) {
	n := 0
	for _, list := range lists {
		n += len(list)
	}
	all := make([]model.TopicMessage, 0, n)
	for _, list := range lists {
		all = append(all, list...)
	}
	parts := make([][]model.TopicMessage, len(lists))
	at := 0
	for i, list := range lists {
		if list != nil {
			parts[i] = all[at : at+len(list) : at+len(list)]
		}
		at += len(list)
	}
	return parts, &view.Page[model.TopicMessage]{Rows: all}
}

// The load functions of the nested fields. Each first starts the same load
// for every sibling of the node (view.Page), then waits for its own. A node
// without siblings (a single lookup's, a subscription's event) has no batch
// to wait for: its load is its batch function's call, straight away (alone).

func (l *loaders) topicOf(ctx context.Context, m *view.TopicMessage) (*view.Topic, error) {
	if m.Page == nil {
		return alone(ctx, l, "topic", l.topics, m.Row.TopicID)
	}
	l.ready()
	if m.Page.FirstTime("topic") {
		seen := map[model.EntityID]bool{}
		for i := range m.Page.Rows {
			if id := m.Page.Rows[i].TopicID; !seen[id] {
				seen[id] = true
				l.topic.Load(ctx, id)
			}
		}
	}
	return l.topic.Load(ctx, m.Row.TopicID)()
}

func (l *loaders) chunksOf(ctx context.Context, m *view.TopicMessage) (messageRows, error) {
	if m.Page == nil {
		return alone(ctx, l, "chunks", l.chunkRows, m.Row)
	}
	l.ready()
	if m.Page.FirstTime("chunks") {
		for i := range m.Page.Rows {
			if m.Page.Rows[i].ChunkNum != nil {
				l.chunks.Load(ctx, &m.Page.Rows[i])
			}
		}
	}
	return l.chunks.Load(ctx, m.Row)()
}

func (l *loaders) messageOf(ctx context.Context, t *view.Topic, seq int64) (*view.TopicMessage, error) {
	key := app.TopicSequence{TopicID: t.Row.ID, SequenceNumber: seq}
	if t.Page == nil {
		return alone(ctx, l, "message", l.messagesBySequence, key)
	}
	l.ready()
	if t.Page.FirstTime("message|" + strconv.FormatInt(seq, 10)) {
		for i := range t.Page.Rows {
			l.message.Load(ctx, app.TopicSequence{TopicID: t.Page.Rows[i].ID, SequenceNumber: seq})
		}
	}
	return l.message.Load(ctx, key)()
}

// latestOf is the topic's newest message (nil when it has none), loaded
// with those of its siblings.
func (l *loaders) latestOf(ctx context.Context, t *view.Topic) (*view.TopicMessage, error) {
	if t.Page == nil {
		return alone(ctx, l, "latest", l.latestMessages, t.Row.ID)
	}
	l.ready()
	if t.Page.FirstTime("latest") {
		for i := range t.Page.Rows {
			l.latest.Load(ctx, t.Page.Rows[i].ID)
		}
	}
	return l.latest.Load(ctx, t.Row.ID)()
}

// messagesOf loads one topic's page through the batch of its query.
func (l *loaders) messagesOf(ctx context.Context, t *view.Topic, q app.MessageQuery) (messagePage, error) {
	qk := queryKey(q)
	if t.Page == nil {
		return alone(ctx, l, "messages", func(ctx context.Context, keys []messagesKey) []*dataloader.Result[messagePage] {
			pages, err := l.app.MessagesOfTopics(ctx, []model.EntityID{t.Row.ID}, q)
			return []*dataloader.Result[messagePage]{{Data: messagePage{MessagePage: pages[t.Row.ID]}, Error: err}}
		}, messagesKey{t.Row.ID, qk})
	}
	l.ready()
	l.mu.Lock()
	l.queries[qk] = q
	l.mu.Unlock()
	if t.Page.FirstTime("messages|" + qk) {
		for i := range t.Page.Rows {
			l.messages.Load(ctx, messagesKey{t.Page.Rows[i].ID, qk})
		}
	}
	return l.messages.Load(ctx, messagesKey{t.Row.ID, qk})()
}

// alone is the value of key for a node without siblings: its batch
// function's answer for the one key, with nothing to wait for; asked again
// in the request (another field of the node, an alias), the same answer.
func alone[K comparable, V any](ctx context.Context, l *loaders, load string, batch func(context.Context, []K) []*dataloader.Result[V], key K) (V, error) {
	e, _ := l.single.LoadOrStore(singleKey{load, key}, &singleLoad[V]{})
	o := e.(*singleLoad[V])
	o.once.Do(func() {
		defer func() {
			if v := recover(); v != nil {
				// the node's other fields fail too, not as if nothing was found
				o.err = fmt.Errorf("graph: load %s panicked: %v", load, v)
				panic(v)
			}
		}()
		r := batch(ctx, []K{key})[0]
		o.value, o.err = r.Data, r.Error
	})
	return o.value, o.err
}

// singleKey names a lone node's load: the loader's name and the key.
type singleKey struct {
	load string
	key  any
}

type singleLoad[V any] struct {
	once  sync.Once
	value V
	err   error
}

// queryKey is a query's canonical text (its topic aside).
func queryKey(q app.MessageQuery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%t", q.Order, q.Limit, q.Lookahead)
	for _, c := range q.SequenceNumber {
		fmt.Fprintf(&b, "|s%s%d", c.Op, c.Value)
	}
	for _, c := range q.Timestamp {
		fmt.Fprintf(&b, "|t%s%d", c.Op, int64(c.Value))
	}
	return b.String()
}

func resultsOf[K comparable, V any](keys []K, value func(K) V) []*dataloader.Result[V] {
	out := make([]*dataloader.Result[V], len(keys))
	for i, k := range keys {
		out[i] = &dataloader.Result[V]{Data: value(k)}
	}
	return out
}

func failAll[V any](n int, err error) []*dataloader.Result[V] {
	out := make([]*dataloader.Result[V], n)
	for i := range out {
		out[i] = &dataloader.Result[V]{Error: err}
	}
	return out
}

// withLoaders gives every request its own loaders (and so its own cache).
func withLoaders(d *app.Ledger, wait time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(withFreshLoaders(r.Context(), d, wait)))
	})
}

func withFreshLoaders(ctx context.Context, d *app.Ledger, wait time.Duration) context.Context {
	return context.WithValue(ctx, loadersKey{}, newLoaders(d, wait))
}

func loadersOf(ctx context.Context) *loaders {
	l, _ := ctx.Value(loadersKey{}).(*loaders)
	if l == nil {
		panic("graph: no loaders in the context; serve through NewHandler")
	}
	return l
}
