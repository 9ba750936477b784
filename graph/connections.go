package graph

import (
	"mirrorql/app"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// A page is read one row past its size (app's Lookahead): hasNextPage is
// exactly "more rows exist". REST's links.next chain may end with an empty
// page instead; the rows of the two chains are the same. Each edge's cursor
// is its row's paging key, which the next page starts after (app.After).

func pageInfo(more bool, cursors []string) *PageInfo {
	p := &PageInfo{HasNextPage: more}
	if len(cursors) > 0 {
		p.EndCursor = &cursors[len(cursors)-1]
	}
	return p
}

// messageConnection is a page of messages; the nodes' siblings are page
// (when the rows came in a batch with other lists), else the rows shown. The
// nodes and edges are written by the views (view/render.go), the cursors
// into the response as they are written.
func messageConnection(p app.MessagePage, page *view.Page[model.TopicMessage]) *TopicMessageConnection {
	nodes := &view.Messages{Rows: p.Rows, Page: page}
	c := &TopicMessageConnection{
		Nodes:    nodes,
		Edges:    &view.MessageEdges{Messages: *nodes, AppendCursor: appendMessageCursor},
		PageInfo: &PageInfo{HasNextPage: p.More},
	}
	if n := len(p.Rows); n > 0 {
		end := encodeCursor(cursorMessage, int64(app.MessageKey(&p.Rows[n-1])))
		c.PageInfo.EndCursor = &end
	}
	return c
}

func appendMessageCursor(b []byte, m *model.TopicMessage) []byte {
	return appendCursor(b, cursorMessage, int64(app.MessageKey(m)))
}

func topicConnection(p app.TopicPage) *TopicConnection {
	rows := p.Rows
	c := &TopicConnection{Edges: make([]*TopicEdge, len(rows)), Nodes: make([]*view.Topic, len(rows))}
	cursors := make([]string, len(rows))
	page := &view.Page[model.Topic]{Rows: rows}
	for i := range rows {
		cursors[i] = encodeCursor(cursorTopic, int64(app.TopicKey(&rows[i])))
		c.Nodes[i] = &view.Topic{Row: &rows[i], Page: page}
		c.Edges[i] = &TopicEdge{Cursor: cursors[i], Node: c.Nodes[i]}
	}
	c.PageInfo = pageInfo(p.More, cursors)
	return c
}

func scheduleConnection(p app.SchedulePage, now, lifetime model.Timestamp) *ScheduleConnection {
	rows := p.Rows
	views := make([]view.Schedule, len(rows))
	cursors := make([]string, len(rows))
	for i := range rows {
		views[i] = view.NewSchedule(&rows[i], now, lifetime)
		cursors[i] = encodeCursor(cursorSchedule, int64(app.ScheduleKey(&rows[i])))
	}
	nodes := view.Schedules{Rows: views}
	return &ScheduleConnection{Nodes: &nodes, Edges: &view.ScheduleEdges{Schedules: nodes, Cursors: cursors},
		PageInfo: pageInfo(p.More, cursors)}
}
