// What a securely aggregated round needs to know (--secure_aggregation=
// secagg+ and the --secagg_* flags); SecAggRounds runs such rounds.
#ifndef FEDBERRY_SERVER_ROUND_SECAGG_OPTIONS_H_
#define FEDBERRY_SERVER_ROUND_SECAGG_OPTIONS_H_

#include "absl/time/time.h"

namespace fedberry::server {

struct SecAggOptions {
  int neighbours = 0;         // K; 0: chosen for each cohort (ChooseParameters)
  int threshold = 0;          // t; 0: chosen with K
  double clip = 0.5;          // each board clips its changes to [-clip, clip]
  int bits = 32;              // the field is 2^bits
  double dropout_rate = 0.1;  // what K and t are chosen to survive
  double corrupt_rate = 0.1;
  // How long each stage after the first waits for boards (the first, keys
  // advertised after training, waits as long as the round's deadline).
  absl::Duration stage_deadline = absl::Seconds(60);
  // The first stage's: the round's (--round_deadline), as boards train first.
  absl::Duration keys_deadline = absl::Minutes(10);
  // Under mutual TLS: every board signs its keys with its fleet key, checked
  // against the certificate of its calls and relayed with the keys.
  bool signed_keys = false;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_SECAGG_OPTIONS_H_
