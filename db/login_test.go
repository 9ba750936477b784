package db

import (
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A password has two forms only where PostgreSQL's SASLprep changes it;
// each form is offered to the methods it is right for, within what the
// driver's own require_auth allows.
func TestLoginForms(t *testing.T) {
	for _, tc := range []struct {
		password, requireAuth string
		want                  []loginForm
	}{
		{"Abc123def456", "", nil},
		{"pässwörd-€", "", nil},
		{"\xff\xfe not UTF-8", "", nil},
		{"\u05d0a\u05d0", "", nil}, // SASLprep refuses it: PostgreSQL hashes it as given
		{"ﬁ\u00ad", "", []loginForm{{"fi", "!password,!md5"}, {"ﬁ\u00ad", "!scram-sha-256"}}},
		{"ﬁ", "!password", []loginForm{{"fi", "!password,!md5"}, {"ﬁ", "!password,!scram-sha-256"}}},
		{"ﬁ", "scram-sha-256, md5", []loginForm{{"fi", "scram-sha-256"}, {"ﬁ", "md5"}}},
		{"ﬁ", "scram-sha-256", []loginForm{{"fi", "scram-sha-256"}}},
		{"ﬁ", "md5,password", []loginForm{{"ﬁ", "md5,password"}}},
		{"ﬁ", "none", []loginForm{{"fi", "none"}, {"ﬁ", "none"}}},
	} {
		cfg, err := pgx.ParseConfig("host=db user=u require_auth='" + tc.requireAuth + "'")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Password = tc.password
		if got := loginForms(cfg); !slices.Equal(got, tc.want) {
			t.Errorf("%+q, require_auth %q: %+q, want %+q", tc.password, tc.requireAuth, got, tc.want)
		}
		for _, f := range loginForms(cfg) {
			// Each form's require_auth is one the driver takes.
			if _, err := pgx.ParseConfig("host=db require_auth='" + f.requireAuth + "'"); err != nil {
				t.Errorf("%q: %v", f.requireAuth, err)
			}
		}
	}
}

// logIn tries the form that logged in last, the other only when the driver
// refused the first for the server's method, and remembers which logged in.
func TestLogIn(t *testing.T) {
	refused := errors.New("failed to connect: require_auth check failed: authentication method requirement \"!password,!md5\" failed: server requested md5 authentication")
	wrong := errors.New("failed to connect: FATAL: password authentication failed (SQLSTATE 28P01)")
	l := &login{forms: make([]loginForm, 2)}
	var tried []int
	dial := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	// connect is a server whose method takes form server (-1: neither,
	// -2: none answers), answering that form err.
	connect := func(server int, err error) func(int) (int, error) {
		return func(form int) (int, error) {
			tried = append(tried, form)
			switch {
			case server == -2:
				return 0, dial
			case form != server:
				return 0, refused
			case err != nil:
				return 0, err
			}
			return form, nil
		}
	}
	for i, step := range []struct {
		server int   // the form the server's method takes
		err    error // its answer to that form
		tried  []int
		last   int32
	}{
		{0, nil, []int{0}, 0},      // scram-sha-256
		{1, nil, []int{0, 1}, 1},   // md5: the SCRAM form refused, the other logs in
		{1, nil, []int{1}, 1},      // and goes first from then on
		{1, wrong, []int{1}, 1},    // a wrong password is the server's answer, not retried
		{0, nil, []int{1, 0}, 0},   // the server moved to scram-sha-256
		{0, wrong, []int{0}, 0},    //
		{1, wrong, []int{0, 1}, 0}, // refused, then wrong: nothing learned
		{-1, nil, []int{0, 1}, 0},  // a method neither form is for
		{-2, nil, []int{0}, 0},     // no server: not retried
	} {
		tried = nil
		_, err := logIn(l, connect(step.server, step.err))
		if (err == nil) != (step.err == nil && step.server >= 0) {
			t.Errorf("step %d: %v", i, err)
		}
		if !slices.Equal(tried, step.tried) || l.last.Load() != step.last {
			t.Errorf("step %d: tried %v, last %d; want %v, %d", i, tried, l.last.Load(), step.tried, step.last)
		}
	}
}
