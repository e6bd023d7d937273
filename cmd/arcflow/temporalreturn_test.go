package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// frontend answers a task poll and the system info call, as Temporal's does.
type frontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
}

func (frontend) PollWorkflowTaskQueue(context.Context, *workflowservice.PollWorkflowTaskQueueRequest) (*workflowservice.PollWorkflowTaskQueueResponse, error) {
	return &workflowservice.PollWorkflowTaskQueueResponse{}, nil
}

func (frontend) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{}, nil
}

// serveFrontend serves a frontend at address and returns it and the address
// it listens on.
func serveFrontend(t *testing.T, address string) (*grpc.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", address)
	require.NoError(t, err)
	s := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(s, frontend{})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return s, lis.Addr().String()
}

func TestATaskPollWaitsForTemporalToComeBack(t *testing.T) {
	server, address := serveFrontend(t, "127.0.0.1:0")
	conn, err := grpc.NewClient(address, append(temporalReturnDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	defer conn.Close()
	svc := workflowservice.NewWorkflowServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = svc.PollWorkflowTaskQueue(ctx, &workflowservice.PollWorkflowTaskQueueRequest{})
	require.NoError(t, err)

	server.Stop()
	for state := conn.GetState(); state == connectivity.Ready; state = conn.GetState() {
		require.True(t, conn.WaitForStateChange(ctx, state), "the connection notices that Temporal is gone")
	}
	_, err = svc.GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{})
	require.Equal(t, codes.Unavailable, status.Code(err), "a call that is not a poll fails at once while Temporal is away: %v", err)

	polled := make(chan error, 1)
	go func() {
		_, err := svc.PollWorkflowTaskQueue(ctx, &workflowservice.PollWorkflowTaskQueueRequest{})
		polled <- err
	}()
	serveFrontend(t, address)
	require.NoError(t, <-polled, "the poll made while Temporal was away went through once it was back")
}
