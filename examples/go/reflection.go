package main

import (
	"sort"

	"google.golang.org/grpc"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// listServices asks the server for its services through server reflection v1 (what
// grpcurl and similar tools use), sorted by name.
func listServices(call newCall, conn *grpc.ClientConn) ([]string, error) {
	ctx, cancel := call()
	defer cancel()
	stream, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	request := &reflectionv1.ServerReflectionRequest{
		MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{ListServices: ""},
	}
	if err := stream.Send(request); err != nil {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	reply, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, service := range reply.GetListServicesResponse().GetService() {
		names = append(names, service.GetName())
	}
	sort.Strings(names)
	return names, nil
}
