package diff

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// ProcessMerges compares one process's request merges.
type ProcessMerges struct {
	PID       uint32 `json:"pid"`
	RealBack  int    `json:"real_back"`
	PredBack  int    `json:"predicted_back"`
	RealFront int    `json:"real_front"`
	PredFront int    `json:"predicted_front"`
}

// QueueMerge is one scheduler queue merge seen in a side's messages.
type QueueMerge struct {
	Time  trace.Time `json:"time"`  // ns
	Queue string     `json:"queue"` // the queue being merged, as the message names it
	Text  string     `json:"text"`  // the message body
}

// Merges compares request merges (from the bios' MergeKind) and scheduler
// queue merges (from the messages: BFQ "merging with queue", CFQ
// "cooperating"/"merging with queue" lines).
type Merges struct {
	RealBack            int        `json:"real_back"`
	PredBack            int        `json:"predicted_back"`
	RealFront           int        `json:"real_front"`
	PredFront           int        `json:"predicted_front"`
	RealQueueMerges     int        `json:"real_queue_merges"`
	PredQueueMerges     int        `json:"predicted_queue_merges"`
	RealScheduledMerges int        `json:"real_scheduled_merges"`      // BFQ "scheduling merge with queue" lines
	PredScheduledMerges int        `json:"predicted_scheduled_merges"` // the same, predicted
	RealSharedFirst     trace.Time `json:"real_shared_first"`          // ns: first message naming a shared queue (bfqSHARED-); NoTime when none
	PredSharedFirst     trace.Time `json:"predicted_shared_first"`     // the same, predicted

	Processes []ProcessMerges `json:"processes"` // processes with any merge on either side, by pid
	RealList  []QueueMerge    `json:"real_list"` // queue merges, in time order
	PredList  []QueueMerge    `json:"predicted_list"`
}

// queueMerges scans a side's messages for queue merges.
func queueMerges(s *Side) (list []QueueMerge, scheduled int, shared trace.Time) {
	shared = trace.NoTime
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		if m.Msg.Shared && shared == trace.NoTime {
			shared = m.Time
		}
		body := m.Msg.Body
		switch {
		case strings.HasPrefix(body, "scheduling merge with queue"):
			scheduled++
		case strings.HasPrefix(body, "merging with queue"),
			m.Msg.Sched == "cfq" && strings.Contains(body, "cooperat"):
			list = append(list, QueueMerge{Time: m.Time, Queue: m.Msg.QueueName(), Text: body})
		}
	}
	return list, scheduled, shared
}

func compareMerges(real, pred *Side) Merges {
	var m Merges
	type pm = ProcessMerges
	procs := map[uint32]*pm{}
	get := func(pid uint32) *pm {
		p := procs[pid]
		if p == nil {
			p = &pm{PID: pid}
			procs[pid] = p
		}
		return p
	}
	for side, s := range []*Side{real, pred} {
		for i := range s.NumBios() {
			switch s.bioMerge(i) {
			case trace.MergeBack:
				if side == 0 {
					m.RealBack++
					get(s.bioPID(i)).RealBack++
				} else {
					m.PredBack++
					get(s.bioPID(i)).PredBack++
				}
			case trace.MergeFront:
				if side == 0 {
					m.RealFront++
					get(s.bioPID(i)).RealFront++
				} else {
					m.PredFront++
					get(s.bioPID(i)).PredFront++
				}
			}
		}
	}
	m.Processes = make([]ProcessMerges, 0, len(procs))
	for _, p := range procs {
		m.Processes = append(m.Processes, *p)
	}
	slices.SortFunc(m.Processes, func(a, b ProcessMerges) int { return cmp.Compare(a.PID, b.PID) })
	m.RealList, m.RealScheduledMerges, m.RealSharedFirst = queueMerges(real)
	m.PredList, m.PredScheduledMerges, m.PredSharedFirst = queueMerges(pred)
	m.RealQueueMerges, m.PredQueueMerges = len(m.RealList), len(m.PredList)
	if m.RealList == nil {
		m.RealList = []QueueMerge{}
	}
	if m.PredList == nil {
		m.PredList = []QueueMerge{}
	}
	return m
}
