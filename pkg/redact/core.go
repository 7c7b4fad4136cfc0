package redact

import (
	"encoding/json"
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Core wraps a zap core so that the message and every field it writes are
// redacted: strings, byte strings, errors, stringers, and objects or
// reflected values (rendered, and replaced by their redacted JSON when
// they held a secret). Wrap the core that encodes (under sampling and tees),
// so that Write is always reached through this one.
func Core(c zapcore.Core, r *Redactor) zapcore.Core {
	if r == nil {
		return c
	}
	return &core{Core: c, r: r}
}

type core struct {
	zapcore.Core
	r *Redactor
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{Core: c.Core.With(c.fields(fields)), r: c.r}
}

func (c *core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *core) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = c.r.String(e.Message)
	e.Stack = c.r.String(e.Stack)
	return c.Core.Write(e, c.fields(fields))
}

func (c *core) fields(in []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(in))
	for i, f := range in {
		out[i] = c.field(f)
	}
	return out
}

func (c *core) field(f zapcore.Field) zapcore.Field {
	switch f.Type {
	case zapcore.StringType:
		f.String = c.r.String(f.String)
	case zapcore.ByteStringType, zapcore.BinaryType:
		if b, ok := f.Interface.([]byte); ok {
			if red := c.r.String(string(b)); red != string(b) {
				return zap.String(f.Key, red)
			}
		}
	case zapcore.ErrorType:
		if err, ok := f.Interface.(error); ok && err != nil {
			return zap.String(f.Key, c.r.String(err.Error()))
		}
	case zapcore.StringerType:
		if s, ok := f.Interface.(fmt.Stringer); ok {
			return zap.String(f.Key, c.r.String(safeString(s)))
		}
	case zapcore.ReflectType, zapcore.ObjectMarshalerType, zapcore.ArrayMarshalerType, zapcore.InlineMarshalerType:
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		data, err := json.Marshal(enc.Fields)
		if err != nil {
			return zap.String(f.Key, Mark+" (a field that could not be checked)")
		}
		if red := c.r.JSON(data); string(red) != string(data) {
			var v map[string]any
			if json.Unmarshal(red, &v) == nil {
				if f.Type == zapcore.InlineMarshalerType {
					return zap.Any(f.Key, v)
				}
				return zap.Any(f.Key, v[f.Key])
			}
			return zap.String(f.Key, string(red))
		}
	}
	return f
}

func safeString(s fmt.Stringer) (str string) {
	defer func() {
		if recover() != nil {
			str = "<String() panicked>"
		}
	}()
	return s.String()
}
