package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func liveOptions() Options {
	o := DefaultOptions()
	o.Topics, o.MessagesPerTopic, o.Schedules = 3, 10, 0
	return o
}

func TestLiveTopicAppend(t *testing.T) {
	t.Parallel()
	o := liveOptions()
	conn, _ := seeded(t, o)
	ctx := context.Background()
	l, err := NewLiveTopic(o, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.ID() != o.TopicID(1) {
		t.Fatalf("ID() = %d, want %d", l.ID(), o.TopicID(1))
	}

	// Two chunk groups' worth of appends.
	const appends = 2 * LiveChunkEvery
	started := time.Now().UnixNano()
	var written int64
	for k := range appends {
		n, err := l.Append(ctx, conn)
		if err != nil {
			t.Fatalf("append %d: %v", k, err)
		}
		chunked := k%LiveChunkEvery == LiveChunkEvery-1
		if (n == 1) == chunked || n < 1 || n > 4 {
			t.Errorf("append %d wrote %d rows (chunk group: %v)", k, n, chunked)
		}
		written += int64(n)
	}
	wantMessages := o.TopicMessages(1) + written

	// Sequence numbers continue the seeded ones without a gap; timestamps
	// grow with them, from the wall clock on.
	topic := o.TopicID(1)
	if got := queryInt(t, conn, `select count(*) from topic_message where topic_id = $1 and sequence_number
		between 1 and $2`, topic, wantMessages); got != wantMessages {
		t.Errorf("%d messages numbered 1..%d, want all", got, wantMessages)
	}
	if got := queryInt(t, conn, "select count(*) from topic_message where topic_id = $1", topic); got != wantMessages {
		t.Errorf("%d messages, want %d", got, wantMessages)
	}
	if n := queryInt(t, conn, `select count(*) from (
		select consensus_timestamp <= lag(consensus_timestamp) over (order by sequence_number) as bad
		from topic_message where topic_id = $1) x where bad`, topic); n != 0 {
		t.Errorf("%d messages not later than their predecessor", n)
	}
	if n := queryInt(t, conn, "select count(*) from topic_message where topic_id = $1 and sequence_number > $2 and consensus_timestamp < $3",
		topic, o.TopicMessages(1), started); n != 0 {
		t.Errorf("%d live messages before the wall clock at the start", n)
	}
	// Only the live topic grew.
	if n := queryInt(t, conn, "select count(*) from topic_message"); n != o.TotalMessages()+written {
		t.Errorf("%d messages in all, want %d", n, o.TotalMessages()+written)
	}

	// Every live message has its own successful submit transaction, the newest
	// of the ledger at the time: same payer, valid before consensus.
	if n := queryInt(t, conn, `select count(*) from topic_message m left join transaction t
		on t.consensus_timestamp = m.consensus_timestamp and t.type = 27 and t.result = 22
		and t.entity_id = m.topic_id and t.payer_account_id = m.payer_account_id
		and t.valid_start_ns < m.consensus_timestamp and t.valid_start_ns > m.consensus_timestamp - 11000000000
		where m.topic_id = $1 and m.sequence_number > $2 and t.consensus_timestamp is null`,
		topic, o.TopicMessages(1)); n != 0 {
		t.Errorf("%d live messages without their transaction", n)
	}
	if n := queryInt(t, conn, "select count(*) from transaction where consensus_timestamp >= $1", started); n != written {
		t.Errorf("%d transactions since the start, want %d", n, written)
	}
	if n := queryInt(t, conn, `select count(*) from topic_message where topic_id = $1 and sequence_number > $2
		and (octet_length(running_hash) <> 48 or running_hash_version <> 3 or octet_length(message) = 0)`,
		topic, o.TopicMessages(1)); n != 0 {
		t.Errorf("%d live messages without a 48-byte running hash of version 3 or a message", n)
	}

	// Single messages alternate text and JSON; chunk groups are complete, in
	// the new form, each chunk with its own transaction.
	rows, err := conn.Query(ctx, `select m.sequence_number, m.message, m.chunk_num, m.chunk_total,
		m.initial_transaction_id, m.valid_start_timestamp, m.payer_account_id, t.valid_start_ns
		from topic_message m join transaction t using (consensus_timestamp)
		where m.topic_id = $1 and m.sequence_number > $2 order by m.sequence_number`, topic, o.TopicMessages(1))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var num, total int32        // of the last chunk read; 0: not in a group
	var initTx []byte           // of the group in progress
	var groupStart, payer int64 // the group's initial transaction id
	for rows.Next() {
		var (
			seq, rowPayer, txStart int64
			message, rowInitTx     []byte
			rowNum, rowTotal       *int32
			validStart             *int64
		)
		if err := rows.Scan(&seq, &message, &rowNum, &rowTotal, &rowInitTx, &validStart, &rowPayer, &txStart); err != nil {
			t.Fatal(err)
		}
		if rowNum == nil {
			if num != total {
				t.Errorf("seq %d: a single message after chunk %d of %d", seq, num, total)
			}
			num, total = 0, 0
			switch {
			case rowInitTx != nil || validStart != nil:
				t.Errorf("seq %d: chunk info on a single message", seq)
			case json.Valid(message) && message[0] == '{':
				kinds = append(kinds, "json")
			case utf8.Valid(message):
				kinds = append(kinds, "text")
			default:
				t.Errorf("seq %d: neither JSON nor text: %q", seq, message)
			}
			continue
		}
		if rowInitTx == nil || validStart != nil || *rowTotal < 2 || *rowTotal > 4 {
			t.Fatalf("seq %d: chunk %d of %d, initial transaction id %x, valid start %v: want the new form of 2–4 chunks",
				seq, *rowNum, *rowTotal, rowInitTx, validStart)
		}
		if *rowNum == 1 {
			if num != total {
				t.Errorf("seq %d: a group starts after chunk %d of %d", seq, num, total)
			}
			kinds = append(kinds, "chunks")
			initTx = rowInitTx
			groupStart, payer = decodeTransactionID(t, rowInitTx)
		} else if *rowNum != num+1 || *rowTotal != total || !bytes.Equal(rowInitTx, initTx) {
			t.Errorf("seq %d: chunk %d of %d does not continue chunk %d of %d", seq, *rowNum, *rowTotal, num, total)
		}
		if rowPayer != payer || txStart != groupStart+int64(*rowNum-1) {
			t.Errorf("seq %d: chunk %d paid by %d, its transaction valid from %d; want %d and %d (initial transaction id %x)",
				seq, *rowNum, rowPayer, txStart, payer, groupStart+int64(*rowNum-1), initTx)
		}
		num, total = *rowNum, *rowTotal
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if num != total {
		t.Errorf("the last group ends at chunk %d of %d", num, total)
	}
	want := "text json text json text json chunks json text json text json text chunks"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("kinds of the appends:\n got %s\nwant %s", got, want)
	}
}

// An Append that fails writes nothing, and the next one fills the same
// sequence number.
func TestLiveTopicAppendIsAtomic(t *testing.T) {
	t.Parallel()
	o := liveOptions()
	conn, _ := seeded(t, o)
	ctx := context.Background()
	l, err := NewLiveTopic(o, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The transaction rows are copied after the messages: refusing them
	// must take the messages back too.
	if _, err := conn.Exec(ctx, `create function refuse() returns trigger language plpgsql as
		$$ begin raise exception 'refused'; end $$;
		create trigger refuse before insert on transaction for each row execute function refuse()`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, conn); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Append with transactions refused: %v", err)
	}
	if n := queryInt(t, conn, "select count(*) from topic_message"); n != o.TotalMessages() {
		t.Fatalf("%d messages after a failed Append, want %d", n, o.TotalMessages())
	}
	if _, err := conn.Exec(ctx, "drop trigger refuse on transaction"); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Append(ctx, conn); err != nil || n != 1 {
		t.Fatalf("Append after the failure: %d, %v", n, err)
	}
	if n := queryInt(t, conn, "select max(sequence_number) from topic_message where topic_id = $1", o.TopicID(0)); n != o.TopicMessages(0)+1 {
		t.Errorf("sequence number %d after the retry, want %d", n, o.TopicMessages(0)+1)
	}
}

// A clock behind the ledger (here: a data set from the future) still writes
// timestamps past every transaction, which is what the live poller's
// watermark needs.
func TestLiveTopicClockBehind(t *testing.T) {
	t.Parallel()
	o := liveOptions()
	o.BaseTimestamp = time.Now().Add(24 * time.Hour).UnixNano()
	conn, _ := seeded(t, o)
	ctx := context.Background()
	newest := queryInt(t, conn, "select max(consensus_timestamp) from transaction")
	l, err := NewLiveTopic(o, 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Append(ctx, conn); err != nil {
			t.Fatal(err)
		}
	}
	got := queryInt(t, conn, "select min(consensus_timestamp) from topic_message where topic_id = $1 and sequence_number > $2",
		o.TopicID(2), o.TopicMessages(2))
	if got != newest+1 {
		t.Errorf("first live timestamp %d, want %d (just past the newest transaction)", got, newest+1)
	}
}

func TestNewLiveTopicRange(t *testing.T) {
	o := liveOptions()
	for _, i := range []int{-1, o.Topics} {
		if _, err := NewLiveTopic(o, i); err == nil {
			t.Errorf("NewLiveTopic(%d) of %d topics: no error", i, o.Topics)
		}
	}
	if l, err := NewLiveTopic(o, 0); err != nil || l.HasSubmitKey() {
		t.Errorf("topic 0: %v, submit key %v; want none", err, l != nil && l.HasSubmitKey())
	}
	if l, err := NewLiveTopic(o, 1); err != nil || !l.HasSubmitKey() {
		t.Errorf("topic 1: %v; want a submit key", err)
	}
}
