package main

// go-plugin's stdio and broker services, called on the connection
// go-plugin made, with hand-encoded messages: the program links
// go-plugin's own generated types for package "plugin" (internal, so not
// importable), and a second registration of the same names would panic.
// Field numbers from go-plugin's internal/plugin/grpc_broker.proto and
// grpc_stdio.proto (src/nomad/proto/plugin.proto has the same).

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// checkStdio opens GRPCStdio.StreamStdio as go-plugin v1.8's client does
// right after it connects (grpc_stdio.go newGRPCStdioClient) and expects an
// open stream: v1.8 only warns about Unimplemented, but then a plugin's
// output would be lost. The driver writes nothing there, so nothing comes.
func checkStdio(conn *grpc.ClientConn) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "StreamStdio", ServerStreams: true},
		"/plugin.GRPCStdio/StreamStdio", grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return "", err
	}
	empty := []byte{}
	if err := st.SendMsg(&empty); err != nil {
		return "", err
	}
	if err := st.CloseSend(); err != nil {
		return "", err
	}
	got := make(chan error, 1)
	go func() {
		var msg []byte
		got <- st.RecvMsg(&msg)
	}()
	select {
	case err := <-got:
		return "", fmt.Errorf("the stream ended at once: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	err = <-got
	if status.Code(err) != codes.Canceled {
		return "", fmt.Errorf("after cancel: %v", err)
	}
	return "StreamStdio open, no data, cancelled cleanly", nil
}

// checkBroker opens a broker stream of its own (go-plugin's client has one
// open already) and knocks for a service ID, as a client with
// GRPCBrokerMultiplex does before it dials a brokered server
// (grpc_broker.go knock): the driver offers none and must say so with an
// acknowledged knock carrying an error, not leave the dialer waiting.
func checkBroker(conn *grpc.ClientConn) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "StartStream", ClientStreams: true, ServerStreams: true},
		"/plugin.GRPCBroker/StartStream", grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return "", err
	}
	const id = 7
	var knock []byte
	knock = protowire.AppendTag(knock, 1, protowire.VarintType) // Knock.knock
	knock = protowire.AppendVarint(knock, 1)
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.VarintType) // ConnInfo.service_id
	msg = protowire.AppendVarint(msg, id)
	msg = protowire.AppendTag(msg, 4, protowire.BytesType) // ConnInfo.knock
	msg = protowire.AppendBytes(msg, knock)
	if err := st.SendMsg(&msg); err != nil {
		return "", err
	}
	var reply []byte
	if err := st.RecvMsg(&reply); err != nil {
		return "", err
	}
	gotID, kn, ack, text := uint64(0), false, false, ""
	for len(reply) > 0 {
		num, typ, n := protowire.ConsumeTag(reply)
		reply = reply[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(reply)
			gotID, reply = v, reply[m:]
		case num == 4 && typ == protowire.BytesType:
			b, m := protowire.ConsumeBytes(reply)
			reply = reply[m:]
			for len(b) > 0 {
				kn2, kt, k := protowire.ConsumeTag(b)
				b = b[k:]
				if kt == protowire.VarintType {
					v, m := protowire.ConsumeVarint(b)
					b = b[m:]
					if kn2 == 1 {
						kn = v == 1
					} else if kn2 == 2 {
						ack = v == 1
					}
				} else {
					s, m := protowire.ConsumeBytes(b)
					b = b[m:]
					if kn2 == 3 {
						text = string(s)
					}
				}
			}
		default:
			m := protowire.ConsumeFieldValue(num, typ, reply)
			if m < 0 {
				return "", fmt.Errorf("bad reply")
			}
			reply = reply[m:]
		}
	}
	if gotID != id || !kn || !ack || text == "" {
		return "", fmt.Errorf("knock answered with id=%d knock=%v ack=%v error=%q", gotID, kn, ack, text)
	}
	_ = st.CloseSend()
	return fmt.Sprintf("StartStream open; a knock for service %d refused: %q", id, text), nil
}
