package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/trust"
)

// What the example reads: a policy file (trusted keys, and deploy's
// staging bucket and capabilities) and a location (or a file).
var (
	policyFile = "release-policy.yaml"
	location   = "s3://releases/app/1.4.0.cloud"
)

// Verify an assembly at a location with a policy file, then deploy it:
// what 'assemble deploy --policy release-policy.yaml --json LOCATION'
// does (TestExampleRunIsDeploy runs both and compares).
func ExampleRun() {
	t, err := trust.Load(trust.Options{PolicyFile: policyFile})
	if err != nil {
		log.Fatal(err)
	}
	a, err := trust.Open(context.Background(), location, t, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	res, err := deploy.Run(context.Background(), a, deploy.Options{})
	json.NewEncoder(os.Stdout).Encode(res)
	fmt.Println(err)
}
