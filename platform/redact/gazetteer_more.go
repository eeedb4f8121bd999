package redact

// givenNamesMore extends the given-name gazetteer (gazetteer.go) with
// given names that are also common words or months (they start a name only
// before a surname: "Will Page", "Hope Bishop"), names in Cyrillic and
// Arabic script, and Vietnamese family names, which come first ("Nguyễn
// Văn An") and so start a name as given names do.
const givenNamesMore = `
will hope mark bill rose joy faith june dawn summer penny rich art chase drew pat ray holly amber grace may april
august sue don frank guy jack max rob autumn ruby pearl crystal hazel iris lily daisy heather sky rusty buck
neil glen cliff dusty sandy misty gene hunter mason cooper

иван ивана дмитрий дмитрия сергей сергея алексей алексея андрей андрея михаил михаила владимир владимира николай
александр александра павел павла пётр петр игорь олег юрий борис евгений виктор максим артём артем денис антон
роман кирилл илья никита егор константин василий григорий фёдор федор степан тимофей матвей ярослав вадим
анна анны ольга ольги елена елены наталья натальи екатерина екатерины татьяна татьяны ирина ирины мария марии
светлана светланы юлия юлии анастасия анастасии дарья дарьи ксения ксении людмила галина валентина надежда вера
любовь алина полина софья софия виктория вероника маргарита кристина евгения оксана марина лариса тамара
олена оксана тарас богдан василь микола

محمد أحمد احمد علي عمر حسن حسين إبراهيم ابراهيم يوسف خالد كريم مصطفى محمود عبدالله سامي رامي طارق فيصل حمزة بلال
زيد زياد سعيد سلمان سلطان ناصر فهد عادل وليد نبيل ماجد منصور جمال هشام إسماعيل اسماعيل عثمان أنس انس
فاطمة عائشة مريم زينب ليلى نور هدى ياسمين أميرة اميرة سلمى رانيا هناء دالية فرح لينا زهراء سارة رنا منى
نادية سميرة خديجة آمنة امنة أسماء اسماء رقية

nguyễn nguyen trần tran lê phạm pham hoàng hoang huỳnh huynh phan vũ võ đặng dang bùi bui đỗ hồ ngô dương duong
lý đinh trương truong lương luong mai trịnh cao văn thị đức minh ngọc thanh quang thu bảo hữu công
`

// surnames is a small gazetteer of family names: a word that is also a
// common given name or word ("Will", "Hope") starts a name when one of
// these follows it.
const surnames = `
smith jones williams taylor brown davies evans wilson thomas johnson roberts robinson thompson wright walker white
edwards hughes green hall lewis harris clarke clark patel jackson wood turner martin cooper hill ward morris moore
clarke lee king baker harrison morgan allen james scott phillips watson davis parker price bennett young griffiths
mitchell kelly cook carter richardson bailey collins bell shaw murphy miller cox richards khan marshall anderson
simpson ellis adams singh begum wilkinson foster chapman powell webb rogers gray grey mason ali hunt hussain campbell
matthews owen palmer holmes mills barnes knight lloyd butler russell barker fisher stevens jenkins murray dixon
harvey graham pearson ahmed fletcher walsh kaur gibson howard andrews stewart elliott reynolds saunders payne fox
ford pearce day brooks west lawrence cole atkinson bradley spencer gill dawson ball burton o'brien watts rose booth
perry ryan grant wells armstrong francis rees hayes hart hudson newman barrett webster hunter gregory carr lowe page
marsh riley dunn woods parsons berry stone reid holland hawkins harding porter robertson newton oliver reed kennedy
williamson bird gardner shah dean lane cooke bates henderson parry burgess bishop walton burns nicholson shepherd ross
cross long freeman warren nicholls hamilton byrne sutton mcdonald yates hodgson robson curtis hopkins o'connor
harper coleman watkins moss mccarthy chambers o'neill griffin sharp hardy wheeler potter osborne johnston gordon doyle
wallace george jordan hutchinson rowe burke may pritchard gilbert willis higgins read miles stevenson stephenson
hammond arnold buckley walters hewitt barber nelson slater austin sullivan whitehead mann frost lambert stephens
blake akhtar lynch goodwin barton woodward thomson cunningham quinn barnett baxter bibi clayton nash greenwood
jennings holt kemp poole gallagher bond stokes tucker davidson fowler heath norman middleton lawson banks french
stanley jarvis gibbs ferguson hayward carroll douglas dickinson todd barlow peters lucas knowles hartley miah
simmons morton alexander field buck church sharpe stone hill long young wood brown price bell carter walker
garcia rodriguez martinez hernandez lopez gonzalez perez sanchez ramirez torres flores rivera gomez diaz
müller mueller schmidt schneider fischer weber meyer wagner becker schulz hoffmann koch richter klein wolf
dubois durand leroy moreau simon laurent lefebvre michel bernard petit rossi russo ferrari esposito bianchi
romano colombo ricci marino greco silva santos oliveira souza costa pereira almeida ferreira rodrigues
kowalski nowak wiśniewski wójcik kowalczyk kamiński lewandowski zieliński szymański
`
