// Command ragstream-client asks a running `ragstream serve` one question through Retrieve,
// Query and StreamQuery, with the Go code generated from proto/ (the module
// github.com/ragstream/ragstream/gen/go), and prints what it got as one JSON object.
// It also lists the server's services through server reflection v1.
//
//	go run . -addr 127.0.0.1:50051 -workspace default "Who leads the Tern sensor team?"
//
// With authentication on, the bearer token comes from RAGSTREAM_TOKEN. The connection is
// plaintext; use grpc/credentials for a server with TLS.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	ragstreamv1 "github.com/ragstream/ragstream/gen/go/ragstream/v1"
)

// Report is what the command prints: one entry per call, comparable with other clients.
type Report struct {
	Services []string     `json:"services"`
	Retrieve RetrieveInfo `json:"retrieve"`
	Query    AnswerInfo   `json:"query"`
	Stream   StreamInfo   `json:"stream"`
}

// Chunk identifies one context chunk.
type Chunk struct {
	ChunkID string `json:"chunk_id"`
	DocID   string `json:"doc_id"`
}

// RetrieveInfo is the context of a Retrieve call.
type RetrieveInfo struct {
	Mode   string  `json:"mode"`
	Chunks []Chunk `json:"chunks"`
}

// AnswerInfo is the context and answer of a Query call.
type AnswerInfo struct {
	Chunks []Chunk `json:"chunks"`
	Answer string  `json:"answer"`
}

// StreamInfo is a StreamQuery call: its context, the deltas joined, and the kinds of the
// messages in order with repeats collapsed (a well-formed stream is context, delta, end).
type StreamInfo struct {
	Chunks []Chunk  `json:"chunks"`
	Answer string   `json:"answer"`
	Events []string `json:"events"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "host:port of `ragstream serve`")
	workspace := flag.String("workspace", "", "workspace to search (empty: the server's default)")
	chunks := flag.Int("chunk-top-k", 5, "chunks in the context (0: the server default)")
	timeout := flag.Duration("timeout", 30*time.Second, "deadline of each call")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ragstream-client [flags] QUESTION")
		os.Exit(2)
	}
	report, err := run(*addr, *timeout, request(*workspace, flag.Arg(0), int32(*chunks)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(report); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// request is the question as a QueryRequest; the three calls take the same fields.
func request(workspace, question string, chunkTopK int32) *ragstreamv1.QueryRequest {
	params := &ragstreamv1.QueryParams{
		Mode:      ragstreamv1.QueryMode_QUERY_MODE_NAIVE,
		ChunkTopK: chunkTopK,
	}
	return &ragstreamv1.QueryRequest{Workspace: workspace, Query: question, Params: params}
}

func run(addr string, timeout time.Duration, q *ragstreamv1.QueryRequest) (*Report, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	call := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if token := os.Getenv("RAGSTREAM_TOKEN"); token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		return ctx, cancel
	}
	report := &Report{}
	if report.Services, err = listServices(call, conn); err != nil {
		return nil, fmt.Errorf("reflection: %w", err)
	}
	client := ragstreamv1.NewQueryServiceClient(conn)
	if report.Retrieve, err = retrieve(call, client, q); err != nil {
		return nil, fmt.Errorf("Retrieve: %w", err)
	}
	if report.Query, err = query(call, client, q); err != nil {
		return nil, fmt.Errorf("Query: %w", err)
	}
	if report.Stream, err = streamQuery(call, client, q); err != nil {
		return nil, fmt.Errorf("StreamQuery: %w", err)
	}
	return report, nil
}

type newCall func() (context.Context, context.CancelFunc)

func retrieve(call newCall, client ragstreamv1.QueryServiceClient, q *ragstreamv1.QueryRequest) (RetrieveInfo, error) {
	ctx, cancel := call()
	defer cancel()
	reply, err := client.Retrieve(ctx, &ragstreamv1.RetrieveRequest{
		Workspace: q.Workspace, Query: q.Query, Params: q.Params, Filter: q.Filter,
	})
	if err != nil {
		return RetrieveInfo{}, err
	}
	return RetrieveInfo{Mode: reply.GetMode().String(), Chunks: chunksOf(reply.GetContext())}, nil
}

func query(call newCall, client ragstreamv1.QueryServiceClient, q *ragstreamv1.QueryRequest) (AnswerInfo, error) {
	ctx, cancel := call()
	defer cancel()
	reply, err := client.Query(ctx, q)
	if err != nil {
		return AnswerInfo{}, err
	}
	return AnswerInfo{Chunks: chunksOf(reply.GetContext()), Answer: reply.GetAnswer()}, nil
}

func streamQuery(call newCall, client ragstreamv1.QueryServiceClient, q *ragstreamv1.QueryRequest) (StreamInfo, error) {
	ctx, cancel := call()
	defer cancel()
	stream, err := client.StreamQuery(ctx, &ragstreamv1.StreamQueryRequest{
		Workspace: q.Workspace, Query: q.Query, Params: q.Params, Filter: q.Filter,
	})
	if err != nil {
		return StreamInfo{}, err
	}
	info := StreamInfo{Chunks: []Chunk{}, Events: []string{}}
	for {
		message, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return info, nil
		}
		if err != nil {
			return StreamInfo{}, err
		}
		kind := "unknown"
		switch event := message.GetEvent().(type) {
		case *ragstreamv1.StreamQueryResponse_Context:
			kind, info.Chunks = "context", chunksOf(event.Context.GetContext())
		case *ragstreamv1.StreamQueryResponse_Delta:
			kind, info.Answer = "delta", info.Answer+event.Delta
		case *ragstreamv1.StreamQueryResponse_End:
			kind = "end"
		}
		if n := len(info.Events); n == 0 || info.Events[n-1] != kind {
			info.Events = append(info.Events, kind)
		}
	}
}

func chunksOf(context *ragstreamv1.Context) []Chunk {
	chunks := []Chunk{}
	for _, c := range context.GetChunks() {
		chunks = append(chunks, Chunk{ChunkID: c.GetChunkId(), DocID: c.GetDocId()})
	}
	return chunks
}
