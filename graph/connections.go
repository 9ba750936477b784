package graph

import (
	"mirrorql/graph/view"
	"mirrorql/model"
)

// The rows arrive with one more than the page size when another page exists
// (the query asked for first+1): hasNextPage is exactly "more rows exist".
// REST's links.next chain may end with an empty page instead; the rows of
// the two chains are the same.

func pageInfo(more bool, cursors []string) *PageInfo {
	p := &PageInfo{HasNextPage: more}
	if len(cursors) > 0 {
		p.EndCursor = &cursors[len(cursors)-1]
	}
	return p
}

// messageConnection is a page of messages; the nodes' siblings are page
// (when the rows came in a batch with other lists), else the rows shown.
func messageConnection(rows []model.TopicMessage, pageSize int, page *view.Page[model.TopicMessage]) *TopicMessageConnection {
	more := len(rows) > pageSize
	if more {
		rows = rows[:pageSize]
	}
	c := &TopicMessageConnection{
		Edges: make([]*TopicMessageEdge, len(rows)),
		Nodes: make([]*view.TopicMessage, len(rows)),
	}
	cursors := make([]string, len(rows))
	if page == nil {
		page = &view.Page[model.TopicMessage]{Rows: rows}
	}
	for i := range rows {
		cursors[i] = encodeCursor(cursorMessage, int64(rows[i].ConsensusTimestamp))
		c.Nodes[i] = &view.TopicMessage{M: &rows[i], Page: page}
		c.Edges[i] = &TopicMessageEdge{Cursor: cursors[i], Node: c.Nodes[i]}
	}
	c.PageInfo = pageInfo(more, cursors)
	return c
}

func topicConnection(rows []model.Topic, pageSize int) *TopicConnection {
	more := len(rows) > pageSize
	if more {
		rows = rows[:pageSize]
	}
	c := &TopicConnection{Edges: make([]*TopicEdge, len(rows)), Nodes: make([]*view.Topic, len(rows))}
	cursors := make([]string, len(rows))
	page := &view.Page[model.Topic]{Rows: rows}
	for i := range rows {
		cursors[i] = encodeCursor(cursorTopic, int64(rows[i].ID))
		c.Nodes[i] = &view.Topic{T: &rows[i], Page: page}
		c.Edges[i] = &TopicEdge{Cursor: cursors[i], Node: c.Nodes[i]}
	}
	c.PageInfo = pageInfo(more, cursors)
	return c
}

func scheduleConnection(rows []model.Schedule, pageSize int) *ScheduleConnection {
	more := len(rows) > pageSize
	if more {
		rows = rows[:pageSize]
	}
	c := &ScheduleConnection{Edges: make([]*ScheduleEdge, len(rows)), Nodes: make([]*view.Schedule, len(rows))}
	cursors := make([]string, len(rows))
	for i := range rows {
		cursors[i] = encodeCursor(cursorSchedule, int64(rows[i].ScheduleID))
		c.Nodes[i] = &view.Schedule{S: &rows[i]}
		c.Edges[i] = &ScheduleEdge{Cursor: cursors[i], Node: c.Nodes[i]}
	}
	c.PageInfo = pageInfo(more, cursors)
	return c
}
