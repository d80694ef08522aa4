// The Prometheus Operator's PrometheusRule (CRD monitoring.coreos.com/v1) is not in the Kubernetes
// schemas: its shape, as the operator's CRD declares it, checked here (the chart test and the alerts test).
import { z } from 'zod';

const duration = z.string().regex(/^(\d+(ms|s|m|h|d|w|y))+$/);

export const prometheusRuleSchema = z
  .object({
    apiVersion: z.literal('monitoring.coreos.com/v1'),
    kind: z.literal('PrometheusRule'),
    metadata: z.object({ name: z.string().min(1), labels: z.record(z.string(), z.string()).optional() }),
    spec: z
      .object({
        groups: z
          .array(
            z
              .object({
                name: z.string().min(1),
                interval: duration.optional(),
                rules: z
                  .array(
                    z
                      .object({
                        alert: z
                          .string()
                          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
                          .optional(),
                        record: z.string().optional(),
                        expr: z.union([z.string().min(1), z.number()]),
                        for: duration.optional(),
                        labels: z.record(z.string(), z.string()).optional(),
                        annotations: z.record(z.string(), z.string()).optional(),
                      })
                      .strict()
                      .refine((r) => Boolean(r.alert) !== Boolean(r.record), 'a rule is either an alert or a record'),
                  )
                  .min(1),
              })
              .strict(),
          )
          .min(1),
      })
      .strict(),
  })
  .strict();
