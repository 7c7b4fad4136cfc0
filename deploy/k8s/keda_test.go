package k8s_test

import (
	"fmt"
	"sort"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KEDA's ScaledObject spec (keda.sh/v1alpha1), mirrored field for field from
// KEDA v2.21.0's API types (status left out: manifests do not set it).
// KEDA's own package (github.com/kedacore/keda/v2/apis/keda/v1alpha1) pulls
// in controller-runtime, client-go and KEDA's webhooks, and v2.21.0 wants
// client-go v0.36, which does not build against the k8s.io/api v0.37.2 these
// tests decode with. A field KEDA has and this mirror lacks fails the strict
// decode: add it here, spelled as KEDA's types spell it.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              scaledObjectSpec `json:"spec"`
}

type scaledObjectSpec struct {
	ScaleTargetRef   *scaleTarget    `json:"scaleTargetRef"`
	PollingInterval  *int32          `json:"pollingInterval,omitempty"`
	InitialCooldown  *int32          `json:"initialCooldownPeriod,omitempty"`
	CooldownPeriod   *int32          `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount *int32          `json:"idleReplicaCount,omitempty"`
	MinReplicaCount  *int32          `json:"minReplicaCount,omitempty"`
	MaxReplicaCount  *int32          `json:"maxReplicaCount,omitempty"`
	Advanced         *scaledAdvanced `json:"advanced,omitempty"`
	Triggers         []scaleTrigger  `json:"triggers"`
	Fallback         *scaledFallback `json:"fallback,omitempty"`
}

type scaleTarget struct {
	APIVersion             string `json:"apiVersion,omitempty"`
	Kind                   string `json:"kind,omitempty"`
	Name                   string `json:"name"`
	EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
}

type scaledAdvanced struct {
	HorizontalPodAutoscalerConfig *struct {
		Name     string                                         `json:"name,omitempty"`
		Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
	} `json:"horizontalPodAutoscalerConfig,omitempty"`
	RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
	ScalingModifiers              *struct {
		Formula          string `json:"formula,omitempty"`
		Target           string `json:"target,omitempty"`
		ActivationTarget string `json:"activationTarget,omitempty"`
		MetricType       string `json:"metricType,omitempty"`
	} `json:"scalingModifiers,omitempty"`
}

type scaledFallback struct {
	FailureThreshold int32  `json:"failureThreshold"`
	Replicas         int32  `json:"replicas"`
	Behavior         string `json:"behavior,omitempty"`
}

type scaleTrigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name,omitempty"`
	UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
	MetricType        string            `json:"metricType,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
}

// triggerKeys are the metadata keys KEDA's scalers read, for the scalers
// these manifests use. A trigger's metadata is a map in the CRD, so a
// misspelled key would pass the decode and be ignored by KEDA: the scaler
// would silently fall back to its defaults.
var triggerKeys = map[string]map[string]bool{
	"nats-jetstream": {
		"natsServerMonitoringEndpoint": true, "account": true, "stream": true, "consumer": true,
		"lagThreshold": true, "activationLagThreshold": true, "useHttps": true,
	},
}

// checkTriggers reports triggers of unknown types and metadata keys the
// scaler does not read.
func (s *scaledObject) checkTriggers() error {
	if len(s.Spec.Triggers) == 0 {
		return fmt.Errorf("ScaledObject %s: no triggers", s.Name)
	}
	for _, tr := range s.Spec.Triggers {
		keys, ok := triggerKeys[tr.Type]
		if !ok {
			return fmt.Errorf("ScaledObject %s: trigger type %q is not one this test knows; add its keys to triggerKeys", s.Name, tr.Type)
		}
		var unknown []string
		for k := range tr.Metadata {
			if !keys[k] {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		if len(unknown) > 0 {
			return fmt.Errorf("ScaledObject %s: %s trigger: unknown metadata %q", s.Name, tr.Type, unknown)
		}
	}
	return nil
}
