package v2

import (
	"context"
	"maps"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// MessageBySequence is the message of that one sequence number: read
// from the one partition the topic's map names for it; and where the map
// names none or several, or that read did not find exactly one row in an
// unchanged partition, the page of that sequence number decides (it learns,
// checks and falls back as every page does).
func (p *Reader) MessageBySequence(ctx context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	part, err := p.partitionOfSequence(ctx, topic, seq)
	if err != nil {
		return nil, err
	}
	if part >= 0 {
		pt := &p.messages.parts[part]
		ms := make([]model.TopicMessage, 0, 2)
		err := p.env.Query(ctx, func(rows driver.RowSource) (err error) {
			ms, err = driver.ScanMessageRows(rows, ms, nil, nil)
			return err
		}, bySequenceOneSQL(pt), int64(topic), seq)
		if err != nil {
			return nil, err
		}
		if len(ms) == 1 {
			return &ms[0], nil
		}
	}
	rows, err := p.messagesOfTopic(ctx, app.MessageFilter{TopicID: topic, Limit: 2,
		SequenceNumber: &model.Range{Lo: seq, Hi: seq}})
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, app.ErrNotFound
	}
	return &rows[0], nil
}

// partitionOfSequence is the partition the topic's map names for the
// sequence number: the index of the one window by name that can hold it,
// -1 when none or several can.
func (p *Reader) partitionOfSequence(ctx context.Context, topic model.EntityID, seq int64) (int, error) {
	ws, err := p.topicWindows(ctx, int64(topic))
	if err != nil {
		return -1, err
	}
	part, n := -1, 0
	r := model.Range{Lo: seq, Hi: seq}
	for _, w := range ws {
		if w.overlaps(r, model.Unbounded()) {
			part, n = int(w.part), n+1
		}
	}
	if n != 1 {
		return -1, nil
	}
	return part, nil
}

// byTimestampV2SQL is messageByTimestampSQL within the partitions of
// transaction and topic_message that hold the time: the generic plan holds
// those two alone. It joins the tables, as v1's does (on Citus, where they
// may not be joined, citusServer reads them apart instead).
func byTimestampV2SQL(tx, msg *partition) string {
	return byTimestampTexts.Of([2]string{tx.name, msg.name}, func() string {
		return "SELECT " + driver.MessageColumnsM + " FROM transaction AS t JOIN topic_message AS m " +
			"ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp" + msg.within("m.consensus_timestamp") +
			" WHERE t.consensus_timestamp = $1" + tx.within("t.consensus_timestamp") + " AND t.result = 22 AND t.type = 27 LIMIT 2"
	})
}

var byTimestampTexts driver.Texts[[2]string] // the transaction and topic_message partitions

// MessageByTimestamp is db.MessageByTimestamp in one statement that joins
// transaction to topic_message within the partitions that hold the time (on
// Citus, where they are not co-located, Citus's).
func (p *Reader) MessageByTimestamp(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	return fresh(ctx, p, func(p *Reader) (*model.TopicMessage, error) {
		tx, msg := p.transactions.at(int64(ts)), p.messages.at(int64(ts))
		ms := make([]model.TopicMessage, 0, 2)
		read := func(rows driver.RowSource) (err error) {
			ms, err = driver.ScanMessageRows(rows, ms, nil, nil)
			return err
		}
		var err error
		if tx.name == "" || msg.name == "" {
			// bounded by its constant: pruned when planned
			err = p.env.QueryPlanned(ctx, read, byTimestampV2SQL(tx, msg), int64(ts))
		} else {
			err = p.env.Query(ctx, read, byTimestampV2SQL(tx, msg), int64(ts))
		}
		switch {
		case err != nil:
			return nil, err
		case len(ms) != 1:
			return nil, app.ErrNotFound
		}
		return &ms[0], nil
	})
}

// MessagesByTimestamp is db.MessagesByTimestamp as a statement per
// timestamp within the partitions that hold it, pipelined; a time no
// partition holds is looked up on its own.
func (p *Reader) MessagesByTimestamp(ctx context.Context, stamps []model.Timestamp) (map[model.Timestamp]*model.TopicMessage, error) {
	one := func(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
		return p.MessageByTimestamp(ctx, ts)
	}
	if len(stamps) < 2 {
		return batchV2(ctx, stamps, one)
	}
	var rest, inPipe []model.Timestamp
	var ps []driver.Piped
	var results [][]model.TopicMessage
	seen := make(map[model.Timestamp]bool, len(stamps))
	for _, ts := range stamps {
		if seen[ts] {
			continue
		}
		seen[ts] = true
		tx, msg := p.transactions.at(int64(ts)), p.messages.at(int64(ts))
		if tx.name == "" || msg.name == "" {
			rest = append(rest, ts)
			continue
		}
		i := len(ps)
		inPipe = append(inPipe, ts)
		results = append(results, make([]model.TopicMessage, 0, 1))
		ps = append(ps, driver.Piped{SQL: byTimestampV2SQL(tx, msg), Args: []any{int64(ts)},
			Read: func(rows driver.RowSource) (err error) {
				results[i], err = driver.ScanMessageRows(rows, results[i], nil, nil)
				return err
			}})
	}
	if err := p.env.Pipeline(ctx, ps); err != nil {
		return nil, err
	}
	out := make(map[model.Timestamp]*model.TopicMessage, len(stamps))
	for i, ts := range inPipe {
		if ms := results[i]; len(ms) == 1 {
			out[ts] = &ms[0]
		}
	}
	more, err := batchV2(ctx, rest, one)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}

// bySequenceBatchSQL is messagesBySequenceSQL within one partition.
func bySequenceBatchSQL(part *partition) string { return batchTexts.of(part) }

var batchTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + driver.MessageColumnsM + " FROM unnest($1::bigint[], $2::bigint[]) AS k(topic_id, sequence_number) " +
		"JOIN topic_message AS m ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number" + part.within("m.consensus_timestamp")
}}

// bySequenceOneSQL is messageBySequenceSQL within one partition: a row it
// finds is the answer, whatever the map (learned before a reset, say) says.
func bySequenceOneSQL(part *partition) string { return oneTexts.of(part) }

var oneTexts = partitionTexts{make: func(part *partition) string {
	return "SELECT " + driver.MessageColumns + " FROM topic_message" +
		" WHERE topic_id = $1 AND sequence_number = $2" + part.within("consensus_timestamp")
}}

// partitionTexts are the texts of one statement, one for each partition.
type partitionTexts struct {
	texts driver.Texts[string] // by the partition's name
	make  func(*partition) string
}

// of is the text for part.
func (c *partitionTexts) of(part *partition) string {
	return c.texts.Of(part.name, func() string { return c.make(part) })
}

// MessagesBySequence is db.MessagesBySequence on the v2 layout: a statement
// per partition over all its keys (on Citus a statement per partition and
// topic: Citus's).
func (p *Reader) MessagesBySequence(ctx context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	return p.bySequence(ctx, keys, byPartition{})
}

// seqBatching is how a batch of lookups by sequence number is split into
// statements.
type seqBatching interface {
	// group is the topic a partition's keys are grouped by beside the
	// partition (0: every topic together).
	group(k app.TopicSequence) model.EntityID
	// batch is the statement of a group of several keys.
	batch(part *partition, topics, seqs []int64) (sql string, args []any)
}

// byPartition: a statement per partition, over its keys of every topic.
type byPartition struct{}

func (byPartition) group(app.TopicSequence) model.EntityID { return 0 }

func (byPartition) batch(part *partition, topics, seqs []int64) (string, []any) {
	return bySequenceBatchSQL(part), []any{driver.Int64Array(topics), driver.Int64Array(seqs)}
}

// bySequence looks up the keys whose topic's map names one partition for
// them a statement per group of b (the statements pipelined); the others,
// and any a statement did not find exactly once, one by one (their own
// lookups learn, check and fall back as a page does).
func (p *Reader) bySequence(ctx context.Context, keys []app.TopicSequence, b seqBatching) (map[app.TopicSequence]*model.TopicMessage, error) {
	one := func(ctx context.Context, k app.TopicSequence) (*model.TopicMessage, error) {
		return p.MessageBySequence(ctx, k.TopicID, k.SequenceNumber)
	}
	if len(keys) < 2 {
		return batchV2(ctx, keys, one)
	}
	groups, order, rest, err := p.groupBySequence(ctx, keys, b)
	if err != nil {
		return nil, err
	}
	results := make([][]model.TopicMessage, len(order))
	ps := make([]driver.Piped, len(order))
	for i, g := range order {
		ps[i] = p.bySequenceStatement(g, groups[g], b, &results[i])
	}
	if err := p.env.Pipeline(ctx, ps); err != nil {
		return nil, err
	}
	out := make(map[app.TopicSequence]*model.TopicMessage, len(keys))
	for i, g := range order {
		rest = takeFound(out, results[i], groups[g], rest)
	}
	more, err := batchV2(ctx, rest, one)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}

// seqGroup is the keys of one partition, and of one topic where the
// batching groups them so (seqBatching).
type seqGroup struct {
	part  int
	topic model.EntityID
}

// groupBySequence groups keys by the partition their topic's map names for
// them, in the order first met; rest are those it names none for.
func (p *Reader) groupBySequence(ctx context.Context, keys []app.TopicSequence, b seqBatching) (groups map[seqGroup][]app.TopicSequence, order []seqGroup, rest []app.TopicSequence, err error) {
	groups = map[seqGroup][]app.TopicSequence{}
	for _, k := range keys {
		part, err := p.partitionOfSequence(ctx, k.TopicID, k.SequenceNumber)
		if err != nil {
			return nil, nil, nil, err
		}
		if part < 0 {
			rest = append(rest, k)
			continue
		}
		g := seqGroup{part: part, topic: b.group(k)}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], k)
	}
	return groups, order, rest, nil
}

// bySequenceStatement is the statement of group g's keys ks (b's batch when
// they are several), its rows read into *result.
func (p *Reader) bySequenceStatement(g seqGroup, ks []app.TopicSequence, b seqBatching, result *[]model.TopicMessage) driver.Piped {
	part := &p.messages.parts[g.part]
	*result = make([]model.TopicMessage, 0, len(ks))
	// One key (most groups when the keys are spread over many partitions):
	// an index probe, without a batch's arrays.
	sql, args := bySequenceOneSQL(part), []any{int64(ks[0].TopicID), ks[0].SequenceNumber}
	if len(ks) > 1 {
		topics, seqs := make([]int64, len(ks)), make([]int64, len(ks))
		for j, k := range ks {
			topics[j], seqs[j] = int64(k.TopicID), k.SequenceNumber
		}
		sql, args = b.batch(part, topics, seqs)
	}
	return driver.Piped{SQL: sql, Args: args,
		Read: func(rs driver.RowSource) (err error) {
			*result, err = driver.ScanMessageRows(rs, *result, nil, nil)
			return err
		}}
}

// takeFound puts into out each of rows found exactly once, and appends to
// rest the keys of ks it did not put there (not found, or found twice: the
// key's lookup of its own decides).
func takeFound(out map[app.TopicSequence]*model.TopicMessage, rows []model.TopicMessage, ks, rest []app.TopicSequence) []app.TopicSequence {
	if len(rows) == 1 && len(ks) == 1 {
		// one key, found once (most groups)
		if k := (app.TopicSequence{TopicID: rows[0].TopicID, SequenceNumber: rows[0].SequenceNumber}); k == ks[0] {
			out[k] = &rows[0]
			return rest
		}
	}
	found := make(map[app.TopicSequence]int, len(rows))
	for r := range rows {
		found[app.TopicSequence{TopicID: rows[r].TopicID, SequenceNumber: rows[r].SequenceNumber}]++
	}
	for r := range rows {
		k := app.TopicSequence{TopicID: rows[r].TopicID, SequenceNumber: rows[r].SequenceNumber}
		if found[k] == 1 {
			out[k] = &rows[r]
		}
	}
	for _, k := range ks {
		if _, ok := out[k]; !ok {
			rest = append(rest, k)
		}
	}
	return rest
}

// batchV2 runs one by one what v1 sends as a batch statement over
// unnest(…): on Citus a multi-shard statement, and on partitions each key
// wants partitions of its own.
func batchV2[K comparable](ctx context.Context, keys []K, one func(context.Context, K) (*model.TopicMessage, error)) (map[K]*model.TopicMessage, error) {
	out := make(map[K]*model.TopicMessage, len(keys))
	for _, k := range keys {
		if _, done := out[k]; done {
			continue
		}
		m, err := one(ctx, k)
		if err == app.ErrNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = m
	}
	return out, nil
}
