package view

import (
	"context"
	"encoding/base64"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"mirrorql/model"
)

// Schedules are written by their views as messages are (render.go), and
// more simply: every field of a schedule is its row's, its signatures' or
// its admin key's, and its status is worked out when the view is made, so
// no selection of a schedule needs gqlgen's executor but for the tests'
// reference (WithExecutor's always).

// Schedule is a schedule row with its entity fields and signatures, and its
// status at the request's time (NewSchedule).
type Schedule struct {
	Row    *model.Schedule
	status model.ScheduleStatus
}

// NewSchedule is the view of row, whose status at now is
// model.Schedule.Status's.
func NewSchedule(row *model.Schedule, now, lifetime model.Timestamp) Schedule {
	return Schedule{Row: row, status: row.Status(now, lifetime)}
}

func (s Schedule) ID() *EntityID                  { return (*EntityID)(&s.Row.ScheduleID) }
func (s Schedule) AdminKey() *Key                 { return keyOf(s.Row.Key) }
func (s Schedule) ConsensusTimestamp() *Timestamp { return (*Timestamp)(&s.Row.ConsensusTimestamp) }
func (s Schedule) CreatorAccountID() *EntityID    { return (*EntityID)(&s.Row.CreatorAccountID) }
func (s Schedule) PayerAccountID() *EntityID      { return (*EntityID)(&s.Row.PayerAccountID) }
func (s Schedule) Deleted() *Bool                 { return boolOf(s.Row.Deleted) }
func (s Schedule) ExecutedTimestamp() *Timestamp  { return timestampOf(s.Row.ExecutedTimestamp) }
func (s Schedule) ExpirationTime() *Timestamp     { return timestampOf(s.Row.ExpirationTime) }
func (s Schedule) Memo() *String                  { return stringOf(s.Row.Memo) }
func (s Schedule) TransactionBody() *Base64       { return (*Base64)(&s.Row.TransactionBody) }
func (s Schedule) WaitForExpiry() *Bool           { return (*Bool)(&s.Row.WaitForExpiry) }
func (s Schedule) Status() model.ScheduleStatus   { return s.status }

// Signatures are REST's signatures: PostgreSQL-style base64 and type names.
func (s Schedule) Signatures() []*ScheduleSignature {
	sigs := make([]ScheduleSignature, len(s.Row.Signatures))
	out := make([]*ScheduleSignature, len(sigs))
	for i := range sigs {
		sigs[i] = signatureOf(&s.Row.Signatures[i])
		out[i] = &sigs[i]
	}
	return out
}

func signatureOf(sig *model.Signature) ScheduleSignature {
	return ScheduleSignature{sig: sig, typ: String(sig.TypeName())}
}

// ScheduleSignature is one of REST's signatures.
type ScheduleSignature struct {
	sig *model.Signature
	typ String
}

func (s *ScheduleSignature) ConsensusTimestamp() *Timestamp {
	return (*Timestamp)(&s.sig.ConsensusTimestamp)
}
func (s *ScheduleSignature) PublicKeyPrefix() *PostgresBase64 {
	return (*PostgresBase64)(&s.sig.PublicKeyPrefix)
}
func (s *ScheduleSignature) Signature() *PostgresBase64 { return (*PostgresBase64)(&s.sig.Signature) }
func (s *ScheduleSignature) Type() *String              { return &s.typ }

// MarshalGQLContext writes the schedule for the selection being written.
func (s Schedule) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := selectionOf(ctx)
	if e := executorOf(ctx); e.always {
		e.ExecSchedule(ctx, sel, &s).MarshalGQL(w)
		return nil
	}
	scheduleSelection(graphql.GetOperationContext(ctx), sel).writeSchedule(w, &s)
	return nil
}

// Schedules are a list of schedules (ScheduleConnection.nodes).
type Schedules struct{ Rows []Schedule }

// MarshalGQLContext writes the schedules in one pass.
func (l *Schedules) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := selectionOf(ctx)
	if e := executorOf(ctx); e.always {
		graphql.MarshalSliceConcurrently(ctx, len(l.Rows), listWorkers, false, func(ctx context.Context, i int) graphql.Marshaler {
			graphql.GetFieldContext(ctx).Result = &l.Rows[i]
			return e.ExecSchedule(ctx, sel, &l.Rows[i])
		}).MarshalGQL(w)
		return nil
	}
	s := scheduleSelection(graphql.GetOperationContext(ctx), sel)
	writeList(ctx, w, len(l.Rows), func(i int) { s.writeSchedule(w, &l.Rows[i]) },
		func(i int) int { return s.scheduleVarBytes(&l.Rows[i]) })
	return nil
}

// ScheduleEdges are a list of edges (ScheduleConnection.edges): each
// schedule with its cursor.
type ScheduleEdges struct {
	Schedules
	Cursors []string
}

// MarshalGQLContext writes the edges in one pass.
func (l *ScheduleEdges) MarshalGQLContext(ctx context.Context, w io.Writer) error {
	sel := selectionOf(ctx)
	if e := executorOf(ctx); e.always {
		graphql.MarshalSliceConcurrently(ctx, len(l.Rows), listWorkers, false, func(ctx context.Context, i int) graphql.Marshaler {
			return e.ExecScheduleEdge(ctx, sel, l.Cursors[i], &l.Rows[i])
		}).MarshalGQL(w)
		return nil
	}
	oc := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFields(oc, sel, isScheduleEdge)
	nodes := make([]*selection, len(fields)) // by field: a node's selection
	for i := range fields {
		if fields[i].Name == "node" {
			nodes[i] = scheduleSelection(oc, fields[i].Selections)
		}
	}
	writeEdges(ctx, w, "ScheduleEdge", fields, nodes, len(l.Rows),
		func(r int) { (*String)(&l.Cursors[r]).MarshalGQL(w) },
		func(s *selection, r int) { s.writeSchedule(w, &l.Rows[r]) },
		func(s *selection, r int) int { return s.scheduleVarBytes(&l.Rows[r]) })
	return nil
}

// The field kinds of a schedule's selection (after a message's).
const (
	fieldScheduleID fieldKind = iota + fieldValidStart + 1
	fieldAdminKey
	fieldCreatorAccountID
	fieldDeleted
	fieldExecutedTimestamp
	fieldExpirationTime
	fieldMemo
	fieldSignatures
	fieldTransactionBody
	fieldWaitForExpiry
	fieldStatus
	// Key's
	fieldKeyType
	fieldKey
	// ScheduleSignature's
	fieldPublicKeyPrefix
	fieldSignature
	fieldSignatureType
)

var scheduleFields = map[string]fieldKind{
	"__typename": fieldTypename, "id": fieldScheduleID, "adminKey": fieldAdminKey,
	"consensusTimestamp": fieldConsensusTimestamp, "creatorAccountId": fieldCreatorAccountID,
	"payerAccountId": fieldPayerAccountID, "deleted": fieldDeleted, "executedTimestamp": fieldExecutedTimestamp,
	"expirationTime": fieldExpirationTime, "memo": fieldMemo, "signatures": fieldSignatures,
	"transactionBody": fieldTransactionBody, "waitForExpiry": fieldWaitForExpiry, "status": fieldStatus,
}

var keyFields = map[string]fieldKind{"__typename": fieldTypename, "type": fieldKeyType, "key": fieldKey}

var signatureFields = map[string]fieldKind{
	"__typename": fieldTypename, "consensusTimestamp": fieldConsensusTimestamp,
	"publicKeyPrefix": fieldPublicKeyPrefix, "signature": fieldSignature, "type": fieldSignatureType,
}

// WritesSchedule tells the Schedule fields the views write.
func WritesSchedule(field string) bool {
	_, ok := scheduleFields[field]
	return ok
}

var (
	isSchedule          = []string{"Schedule"}
	isScheduleEdge      = []string{"ScheduleEdge"}
	isKey               = []string{"Key"}
	isScheduleSignature = []string{"ScheduleSignature"}
)

// scheduleSelection is sel over a Schedule, with its admin key's and its
// signatures'.
func scheduleSelection(oc *graphql.OperationContext, sel ast.SelectionSet) *selection {
	fields := graphql.CollectFields(oc, sel, isSchedule)
	s := &selection{typename: "Schedule", fields: make([]selected, 0, len(fields))}
	for _, f := range fields {
		out := selected{alias: f.Alias, kind: scheduleFields[f.Name]}
		switch out.kind {
		case fieldAdminKey:
			out.sub = objectSelection(oc, f.Selections, "Key", isKey, keyFields)
		case fieldSignatures:
			out.sub = objectSelection(oc, f.Selections, "ScheduleSignature", isScheduleSignature, signatureFields)
		}
		s.fields = append(s.fields, out)
	}
	return s
}

// writeSchedule writes v's fields of s.
func (s *selection) writeSchedule(w io.Writer, v *Schedule) {
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldScheduleID:
			v.ID().MarshalGQL(w)
		case fieldAdminKey:
			if k := v.AdminKey(); k != nil {
				f.sub.writeKey(w, k)
			} else {
				io.WriteString(w, "null") //nolint:errcheck
			}
		case fieldConsensusTimestamp:
			v.ConsensusTimestamp().MarshalGQL(w)
		case fieldCreatorAccountID:
			v.CreatorAccountID().MarshalGQL(w)
		case fieldPayerAccountID:
			v.PayerAccountID().MarshalGQL(w)
		case fieldDeleted:
			marshalOrNull(w, v.Deleted())
		case fieldExecutedTimestamp:
			marshalOrNull(w, v.ExecutedTimestamp())
		case fieldExpirationTime:
			marshalOrNull(w, v.ExpirationTime())
		case fieldMemo:
			marshalOrNull(w, v.Memo())
		case fieldSignatures:
			sigs := v.Row.Signatures
			io.WriteString(w, "[") //nolint:errcheck
			for i := range sigs {
				if i > 0 {
					io.WriteString(w, ",") //nolint:errcheck
				}
				sig := signatureOf(&sigs[i])
				f.sub.writeSignature(w, &sig)
			}
			io.WriteString(w, "]") //nolint:errcheck
		case fieldTransactionBody:
			v.TransactionBody().MarshalGQL(w)
		case fieldWaitForExpiry:
			v.WaitForExpiry().MarshalGQL(w)
		case fieldStatus:
			writeTypename(w, string(v.status)) // an enum value: a name, nothing to escape
		}
	})
}

func (s *selection) writeKey(w io.Writer, k *Key) {
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldKeyType:
			k.Type().MarshalGQL(w)
		case fieldKey:
			k.Key().MarshalGQL(w)
		}
	})
}

func (s *selection) writeSignature(w io.Writer, sig *ScheduleSignature) {
	s.write(w, func(f *selected) {
		switch f.kind {
		case fieldConsensusTimestamp:
			sig.ConsensusTimestamp().MarshalGQL(w)
		case fieldPublicKeyPrefix:
			sig.PublicKeyPrefix().MarshalGQL(w)
		case fieldSignature:
			sig.Signature().MarshalGQL(w)
		case fieldSignatureType:
			sig.Type().MarshalGQL(w)
		}
	})
}

// scheduleVarBytes are the bytes of v's data that s writes beyond what every
// schedule takes: its transaction body, memo and signatures' base64 (the
// estimate only sizes a buffer, and never exceeds what is written).
func (s *selection) scheduleVarBytes(v *Schedule) int {
	n := 0
	for i := range s.fields {
		switch f := &s.fields[i]; f.kind {
		case fieldTransactionBody:
			n += base64.StdEncoding.EncodedLen(len(v.Row.TransactionBody))
		case fieldMemo:
			if v.Row.Memo != nil {
				n += len(*v.Row.Memo)
			}
		case fieldSignatures:
			for j := range v.Row.Signatures {
				sig := &v.Row.Signatures[j]
				for k := range f.sub.fields {
					switch f.sub.fields[k].kind {
					case fieldPublicKeyPrefix:
						n += base64.StdEncoding.EncodedLen(len(sig.PublicKeyPrefix))
					case fieldSignature:
						n += base64.StdEncoding.EncodedLen(len(sig.Signature))
					}
				}
			}
		}
	}
	return n
}

func (Schedule) UnmarshalGQLContext(context.Context, any) error       { return errOutputOnly }
func (*Schedules) UnmarshalGQLContext(context.Context, any) error     { return errOutputOnly }
func (*ScheduleEdges) UnmarshalGQLContext(context.Context, any) error { return errOutputOnly }
